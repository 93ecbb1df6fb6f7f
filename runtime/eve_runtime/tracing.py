"""Trace coordinates of sessions and turns: W3C trace context ids, minted here and only here.

`session.started.data.trace` and `turn.started.data.trace` carry
`{decision, spanId, traceFlags, traceId}` as eve's do, so stream consumers (eval reporters, a
UI) can correlate a session with an observability backend. As eve 0.80.1 was seen to do, a
session gets a trace id and a span id when it starts, its first turn reports the same ids, and
every later turn starts a trace of its own. A request's `traceparent` header (W3C version 00)
on create or on a follow-up puts the session or that turn in the caller's trace instead, with a
span id of its own and the caller's flags; a malformed one is ignored, never refused. A
subagent's session joins its parent turn's trace the same way.

No spans are recorded yet: these are ids only. When eve gains OpenTelemetry (issue 17), this
module is what changes: `session_trace` and `turn_trace` open the real spans and return their
contexts, and everything else stays as it is.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any

__all__ = ["TraceContext", "parse_traceparent", "session_trace", "trace_wire", "turn_trace"]

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
SAMPLED = 0x01
DECISION = {"action": "record", "recordInputs": True, "recordOutputs": True}
"""What is recorded for a traced session (eve reports it beside the ids)."""


@dataclass(frozen=True)
class TraceContext:
    """W3C trace context coordinates: a 32-hex trace id, a 16-hex span id and the trace flags."""

    trace_id: str
    span_id: str
    trace_flags: int = SAMPLED

    @property
    def traceparent(self) -> str:
        """The `traceparent` header value of this context."""
        return f"00-{self.trace_id}-{self.span_id}-{self.trace_flags:02x}"

    def to_json(self) -> dict[str, Any]:
        """The stored form (`traceId`, `spanId`, `traceFlags`)."""
        return {"spanId": self.span_id, "traceFlags": self.trace_flags, "traceId": self.trace_id}

    @classmethod
    def from_json(cls, value: Any) -> TraceContext | None:
        """A context from its stored form, or None when `value` is not one."""
        if not isinstance(value, dict):
            return None
        trace_id, span_id, flags = value.get("traceId"), value.get("spanId"), value.get("traceFlags")
        if not isinstance(trace_id, str) or not isinstance(span_id, str) or not isinstance(flags, int):
            return None
        return parse_traceparent(f"00-{trace_id}-{span_id}-{flags & 0xFF:02x}")


def _valid(value: str) -> bool:
    return value.strip("0") != ""  # all zeros is W3C's invalid id


def parse_traceparent(value: object) -> TraceContext | None:
    """The context of a W3C version-00 `traceparent` value (None when absent or malformed)."""
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.match(value.strip().lower())
    if match is None or not _valid(match[1]) or not _valid(match[2]):
        return None
    return TraceContext(match[1], match[2], int(match[3], 16))


def _span_id() -> str:
    while True:
        value = secrets.token_hex(8)
        if _valid(value):
            return value


def _trace_id() -> str:
    while True:
        value = secrets.token_hex(16)
        if _valid(value):
            return value


def session_trace(parent: TraceContext | None) -> TraceContext:
    """The trace context of a new session: in `parent`'s trace when a caller sent one, else a new trace."""
    if parent is None:
        return TraceContext(_trace_id(), _span_id())
    return TraceContext(parent.trace_id, _span_id(), parent.trace_flags)


def turn_trace(parent: TraceContext | None) -> TraceContext:
    """The trace context of a turn after the session's first: in `parent`'s trace when its message brought one."""
    return session_trace(parent)


def trace_wire(context: TraceContext) -> dict[str, Any]:
    """`data.trace` of `session.started` and `turn.started`."""
    return {"decision": dict(DECISION), **context.to_json()}
