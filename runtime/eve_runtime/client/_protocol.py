"""The client's protocol logic, without I/O: request bodies, error answers, retries, stream reading.

The sync and async clients only move bytes; everything they decide (what to send, what an answer
means, when to retry, where a dropped stream resumes) is here, so both behave the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from eve_runtime.client.errors import (
    ResponseError,
    SessionStrandedError,
    StreamProtocolError,
    StreamReconnectExhausted,
)
from eve_runtime.client.legacy import STREAM_VERSIONS, LegacyNormaliser, named_skill_loads, normaliser_for
from eve_runtime.client.parts import Event

__all__ = [
    "API",
    "NOT_READY",
    "STORE_UNAVAILABLE",
    "TERMINAL_EVENTS",
    "Backoff",
    "StreamCursor",
    "camel_fields",
    "decode_answer",
    "describe",
    "message_body",
    "probe_ended",
    "schedule_path",
    "session_path",
]

API = "/eve/v1"
NOT_READY = "session_not_ready"
SESSION_STRANDED = "session_stranded"
STORE_UNAVAILABLE = "store_unavailable"
"""The code of a 503 whose store could not serve the request (a reconnecting stream waits and tries again)."""
TERMINAL_EVENTS = frozenset({"session.completed", "session.failed"})
_CAMEL = re.compile(r"_([a-z])")


def schedule_path(name: str) -> str:
    """`/eve/v1/dev/schedules/<name>`, with the name escaped (a nested name's `/` too)."""
    return f"{API}/dev/schedules/{quote(name, safe='')}"


def session_path(session_id: str, suffix: str = "") -> str:
    """`/eve/v1/session/<id><suffix>`, with the id escaped."""
    return f"{API}/session/{quote(session_id, safe='')}{suffix}"


def camel_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Body fields with snake_case names in the wire's camelCase (`operation_id` -> `operationId`); None dropped."""
    return {_CAMEL.sub(lambda m: m.group(1).upper(), key): value for key, value in fields.items() if value is not None}


def message_body(
    message: str | Sequence[Mapping[str, Any]],
    *,
    turn_policy: str | None,
    idempotency_key: str | None,
    client_context: Any,
    output_schema: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The body of a follow-up message."""
    body: dict[str, Any] = {"message": message if isinstance(message, str) else [dict(part) for part in message]}
    return body | camel_fields(
        {
            "turn_policy": turn_policy,
            "idempotency_key": idempotency_key,
            "client_context": client_context,
            "output_schema": dict(output_schema) if output_schema is not None else None,
        }
    )


def describe(exc: Exception) -> str:
    """A transport error in a few words."""
    return str(exc) or type(exc).__name__


def decode_answer(status: int, content: bytes, reason: str = "") -> dict[str, Any]:
    """The JSON body of a successful answer.

    Raises:
        ResponseError: For a status of 400 and above, with the body's `error` and `code` (eve's
            error bodies are `{"ok": false, "error", "code"?}`), or for a body that is not a
            JSON object.
    """
    try:
        body = json.loads(content) if content else {}
    except ValueError:
        body = None
    if status >= 400:
        fields = body if isinstance(body, dict) else {}
        error = fields.get("error")
        message = error if isinstance(error, str) and error else (reason or f"HTTP {status}")
        code = fields.get("code")
        if code == SESSION_STRANDED:
            raise SessionStrandedError(status, message, code, fields)
        raise ResponseError(status, message, code if isinstance(code, str) else None, fields)
    if not isinstance(body, dict):
        raise ResponseError(status, "the server answered with something that is not a JSON object")
    return body


@dataclass(frozen=True)
class Backoff:
    """Bounded exponential backoff: `initial`, doubling up to `maximum`, until the delays add up to `total`."""

    initial: float = 0.1
    maximum: float = 2.0
    total: float = 20.0

    def delays(self) -> Iterator[float]:
        """The delays to wait before each retry (empty once the budget is spent)."""
        spent, delay = 0.0, self.initial
        while spent < self.total:
            step = min(delay, self.maximum, self.total - spent)
            yield step
            spent += step
            delay *= 2


Next = Literal["done", "now", "later", "probe"]
"""What to do when a stream response ended: stop, reconnect at once, reconnect after a delay, or
check whether the session ended (a follow that ended without events or a terminal event)."""


class StreamCursor:
    """One logical read of a session's stream, across as many HTTP responses as it takes.

    The cursor (`index`) is the number of events consumed: a reconnect asks for
    `startIndex=<index>`, so the server resumes exactly there. Events are yielded once per
    `meta.id`. A bounded read (`follow=False`) keeps the tail its first response reported, so
    reconnects never read past it. A bounded read from a negative `start_index` (relative to the
    tail) is one response: no reconnect, no cursor; a live follow is `anchor`ed first.
    """

    def __init__(self, session_id: str, start_index: int, *, follow: bool, max_reconnects: int = 5) -> None:
        self.session_id = session_id
        self.index = start_index
        self.follow = follow
        self.relative = start_index < 0
        self.bound: int | None = None
        self.ended = False
        self.max_reconnects = max_reconnects
        self.failures = 0
        self.connected_once = False
        self._seen: set[str] = set()
        self._buffer = b""
        self._progressed = False
        self._lease_ended = False
        self._interrupted = False
        self.version: str | None = None
        """The `x-eve-stream-version` of the last response (older ones' events are normalised to 26)."""
        self._legacy: LegacyNormaliser | None = None

    def anchor(self, count: int) -> None:
        """Turn a tail-relative start into an absolute one, given the session's event count now.

        A live follow from the tail is anchored this way before it opens, so it can resume from
        its cursor like any other follow.
        """
        self.index = max(0, count + self.index) if self.relative else self.index
        self.relative = False

    @property
    def done(self) -> bool:
        """Whether the read is complete: a terminal event, or the bound of a bounded read reached."""
        return self.ended or (self.bound is not None and self.index >= self.bound)

    def params(self) -> dict[str, str]:
        """The query of the next request."""
        params = {"startIndex": str(self.index)}
        if not self.follow:
            params["follow"] = "false"
        elif not self.relative:
            params["streamControlVersion"] = "1"  # heartbeats while quiet, and a lease the client renews
        return params

    def opened(self, headers: Mapping[str, str]) -> None:
        """A response opened (status 200): check it is an eve stream and start reading its body."""
        version = headers.get("x-eve-stream-version")
        if version not in STREAM_VERSIONS:
            raise StreamProtocolError(
                f"the stream of {self.session_id} has x-eve-stream-version {version!r}; "
                f"this client reads versions {min(STREAM_VERSIONS)} to {max(STREAM_VERSIONS)}"
            )
        if self._legacy is None or version != self.version:  # a reconnect may reach another deployment
            self._legacy = normaliser_for(version)
        self.version = version
        self.connected_once = True
        self._buffer, self._progressed, self._lease_ended, self._interrupted = b"", False, False, False
        if not self.follow and not self.relative and self.bound is None:
            tail = headers.get("x-eve-stream-tail-index")
            try:
                self.bound = int(tail or "") + 1
            except ValueError:
                raise StreamProtocolError(f"a bounded read of {self.session_id} has no tail index") from None

    def feed(self, chunk: bytes) -> list[Event]:
        """The new events in a piece of the body (only complete lines are read; the rest waits)."""
        *lines, self._buffer = (self._buffer + chunk).split(b"\n")
        events = []
        for line in lines:
            if self.done:
                break
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: bytes) -> Event | None:
        if not line.strip():
            return None  # the opening newline, or a heartbeat
        try:
            value = json.loads(line)
        except ValueError:
            raise StreamProtocolError(f"the stream of {self.session_id} sent a line that is not JSON") from None
        if not isinstance(value, dict):
            raise StreamProtocolError(f"the stream of {self.session_id} sent a line that is not an object")
        if "$eve" in value:  # a transport record, never an event
            if value["$eve"] == "stream.lease-ended":
                self._lease_ended = self._progressed = True
            elif value["$eve"] == "stream.interrupted":  # the server's store failed: not a normal end
                self._interrupted = True
            return None
        self._progressed = True
        if not self.relative:
            self.index += 1
        if value.get("type") in TERMINAL_EVENTS:
            self.ended = True
        meta = value.get("meta")
        event_id = meta.get("id") if isinstance(meta, dict) else None
        if isinstance(event_id, str):
            if event_id in self._seen:
                return None
            self._seen.add(event_id)
        if self._legacy is not None:
            value = self._legacy(value)
        return named_skill_loads(value)

    def closed(self) -> Next:
        """The response ended cleanly: what next."""
        if self.done or self.relative:
            return "done"
        if self._interrupted:  # reconnect after a pause (the store is failing): counted, like a drop
            self._interrupted = False
            if self._progressed:
                self._progressed, self.failures = False, 0
            return self.dropped("the server's store failed during the stream")
        if self._lease_ended:
            self._lease_ended = self._progressed = False
            self.failures = 0
            return "now"
        if not self.follow:
            return self.dropped("the bounded read ended before its tail")
        if self._progressed:
            self._progressed = False
            self.failures = 0
            return "now"
        return "probe"

    def dropped(self, reason: str) -> Next:
        """The connection failed or ended early: reconnect (now after progress, else after a delay).

        Raises:
            StreamReconnectExhausted: After `max_reconnects` attempts in a row that received nothing.
        """
        if self.relative:
            raise StreamReconnectExhausted(self.session_id, self.index, reason)
        if self._progressed:
            self._progressed = False
            self.failures = 0
            return "now"
        self.failures += 1
        if self.failures >= self.max_reconnects:
            raise StreamReconnectExhausted(self.session_id, self.index, reason)
        return "later"

    def reconnect_delay(self) -> float:
        """Seconds to wait before the next attempt after `failures` failed ones."""
        return min(0.05 * 2 ** (self.failures - 1), 2.0) if self.failures else 0.0


def probe_ended(cursor: StreamCursor, headers: Mapping[str, str], content: bytes) -> bool:
    """Whether a tail read (`startIndex=-1&follow=false`) shows the session ended at or before the cursor.

    A live follow that ended without events and without a lease record asks this: when it is
    true the read is complete (and the cursor is marked ended), otherwise it reconnects.
    """
    try:
        count = int(headers.get("x-eve-stream-tail-index") or "") + 1
    except ValueError:
        return False
    lines = [line for line in content.split(b"\n") if line.strip()]
    try:
        last = json.loads(lines[-1]) if lines else {}
    except ValueError:
        return False
    if isinstance(last, dict) and last.get("type") in TERMINAL_EVENTS and cursor.index >= count:
        cursor.ended = True
    return cursor.ended
