"""Trace coordinates of sessions, turns and calls: W3C trace context ids, minted here and only here.

`session.started.data.trace` and `turn.started.data.trace` carry
`{decision, spanId, traceFlags, traceId}` as eve's do, so stream consumers (eval reporters, a
UI) can correlate a session with an observability backend. As eve 0.80.1 was seen to do, a
session gets a trace id and a span id when it starts, its first turn reports the same ids, and
every later turn starts a trace of its own. A request's `traceparent` header (W3C version 00)
on create or on a follow-up puts the session or that turn in the caller's trace instead, with a
span id of its own and the caller's flags; a malformed one is ignored, never refused. A child
session (a subagent's, a tool task's) joins its parent's trace under the span of the call that
started it ([`call_context`][eve_runtime.telemetry.ids.call_context]).

The ids are minted whether or not spans are exported: the spans (`eve_runtime.telemetry.recorder`)
adopt them. What a session and a turn need to record their spans later, possibly in another
process days after they started, is stored with the checkpoint
([`SessionTrace`][eve_runtime.telemetry.ids.SessionTrace], [`TurnTrace`][eve_runtime.telemetry.ids.TurnTrace]);
see `docs/telemetry.md` for the model.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DROP",
    "SessionTrace",
    "TraceContext",
    "TurnTrace",
    "call_context",
    "decision_for",
    "open_session",
    "open_turn",
    "parse_traceparent",
    "session_trace",
    "trace_wire",
    "turn_trace",
]

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
SAMPLED = 0x01
DROP: dict[str, Any] = {"action": "drop"}
"""The decision of a trace its caller did not sample: nothing of it is recorded."""


UNKNOWN: dict[str, Any] = {"action": "record", "recordInputs": False, "recordOutputs": False}
"""The decision of a session stored before decisions were (its spans record no content)."""


def decision_for(
    record_inputs: bool | None, record_outputs: bool | None, *, development: bool, sampled: bool = True
) -> dict[str, Any]:
    """What is recorded for a session (`data.trace.decision`), from the agent's `telemetry` config.

    None (the default) follows eve: prompts and outputs are recorded under `eve dev`, not in
    production. A trace whose caller did not sample it records nothing.
    """
    if not sampled:
        return dict(DROP)
    inputs = development if record_inputs is None else record_inputs
    outputs = development if record_outputs is None else record_outputs
    return {"action": "record", "recordInputs": inputs, "recordOutputs": outputs}


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

    @property
    def sampled(self) -> bool:
        """Whether the trace is recorded (the W3C sampled flag)."""
        return bool(self.trace_flags & SAMPLED)

    def to_json(self) -> dict[str, Any]:
        """The stored form (`traceId`, `spanId`, `traceFlags`)."""
        return {"spanId": self.span_id, "traceFlags": self.trace_flags, "traceId": self.trace_id}

    def with_span(self, span_id: str) -> TraceContext:
        """The same trace and flags with another span id."""
        return TraceContext(self.trace_id, span_id, self.trace_flags)

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


def call_context(turn: TraceContext, session_id: str, call_id: str) -> TraceContext:
    """The span of a tool call (or task) of a turn: derived from the ids, so every process agrees on it.

    A task's child session is created with this as its parent, so its spans join the parent's
    trace under the call that started it.
    """
    digest = hashlib.blake2b(f"{session_id}\0{call_id}".encode(), digest_size=8).hexdigest()
    return turn.with_span(digest if _valid(digest) else "0000000000000001")


def trace_wire(context: TraceContext, decision: dict[str, Any] | None = None) -> dict[str, Any]:
    """`data.trace` of `session.started` and `turn.started`."""
    return {"decision": dict(decision or UNKNOWN), **context.to_json()}


def _now_ns() -> int:
    return time.time_ns()


@dataclass(frozen=True)
class SessionTrace:
    """A session's stored trace state (`SessionState.trace`): its span's ids, parent, start and decision."""

    context: TraceContext
    decision: dict[str, Any]
    parent_span_id: str | None = None
    """The caller's span (a `traceparent`, or the parent's call for a child session)."""
    started_ns: int = field(default_factory=_now_ns)

    def to_json(self) -> dict[str, Any]:
        """The stored form: the context's keys plus `decision`, `parentSpanId` and `startedAt` (epoch ns)."""
        data = {**self.context.to_json(), "decision": self.decision, "startedAt": self.started_ns}
        if self.parent_span_id is not None:
            data["parentSpanId"] = self.parent_span_id
        return data

    @classmethod
    def from_json(cls, value: Any) -> SessionTrace | None:
        """The stored state, or None when `value` holds no context (older checkpoints keep only the ids)."""
        context = TraceContext.from_json(value)
        if context is None:
            return None
        decision = value.get("decision")
        parent = value.get("parentSpanId")
        started = value.get("startedAt")
        return cls(
            context,
            decision if isinstance(decision, dict) else dict(UNKNOWN),
            parent if isinstance(parent, str) else None,
            started if isinstance(started, int) else _now_ns(),
        )


@dataclass(frozen=True)
class TurnTrace:
    """A turn's stored trace state (`TurnState.trace`).

    `reported` is what `turn.started` says (the session's ids for the first turn, as eve's);
    `span_id` is the turn span's own id, `parent` its parent span (the session's for the first
    turn, a caller's `traceparent`), `link` the session span a later turn links to.
    """

    reported: TraceContext
    span_id: str
    parent: TraceContext | None = None
    link: TraceContext | None = None
    started_ns: int = field(default_factory=_now_ns)
    usage_at_start: tuple[int, int] = (0, 0)
    """The session's input and output tokens when the turn started (the turn's own are the difference)."""
    cost_at_start: float | None = None
    """The session's cost (USD) when the turn started, if a model reported any."""

    @property
    def span(self) -> TraceContext:
        """The turn span's own context."""
        return self.reported.with_span(self.span_id)

    def to_json(self) -> dict[str, Any]:
        """The stored form: the reported context's keys plus what recording the turn's span needs."""
        data: dict[str, Any] = {
            **self.reported.to_json(),
            "turnSpanId": self.span_id,
            "startedAt": self.started_ns,
            "usageAtStart": list(self.usage_at_start),
        }
        if self.cost_at_start is not None:
            data["costAtStart"] = self.cost_at_start
        if self.parent is not None:
            data["parent"] = self.parent.to_json()
        if self.link is not None:
            data["link"] = self.link.to_json()
        return data

    @classmethod
    def from_json(cls, value: Any) -> TurnTrace | None:
        """The stored state, or None when `value` holds no context."""
        reported = TraceContext.from_json(value)
        if reported is None:
            return None
        span_id = value.get("turnSpanId")
        started = value.get("startedAt")
        usage = value.get("usageAtStart")
        cost = value.get("costAtStart")
        return cls(
            reported,
            span_id if isinstance(span_id, str) else reported.span_id,
            TraceContext.from_json(value.get("parent")),
            TraceContext.from_json(value.get("link")),
            started if isinstance(started, int) else _now_ns(),
            (int(usage[0]), int(usage[1])) if isinstance(usage, list) and len(usage) == 2 else (0, 0),
            float(cost) if isinstance(cost, int | float) else None,
        )


def open_session(caller: TraceContext | None, decision: dict[str, Any]) -> SessionTrace:
    """The trace state of a new session: in `caller`'s trace (a `traceparent`, a parent's call) or a new one."""
    return SessionTrace(session_trace(caller), decision, caller.span_id if caller is not None else None)


def open_turn(
    session: SessionTrace, first: bool, caller: TraceContext | None, usage: tuple[int, int], cost: float | None = None
) -> TurnTrace:
    """The trace state of a new turn.

    The first is the session span's child and reports its ids; a later one is in `caller`'s trace
    (a follow-up's `traceparent`) or a trace of its own, linked to the session.
    """
    if first:
        return TurnTrace(session.context, _span_id(), parent=session.context, usage_at_start=usage, cost_at_start=cost)
    reported = turn_trace(caller)
    return TurnTrace(
        reported, reported.span_id, parent=caller, link=session.context, usage_at_start=usage, cost_at_start=cost
    )
