"""The outcome of one turn, read from the stream: `TurnResult`, and the watch that decides when a turn is over.

A turn is over for a caller at its boundary: `session.waiting` (the turn ended and the session
waits for the next message), `session.completed` or `session.failed`, or `turn.waiting` with
`on: "input"` (the turn waits for a person: the caller must answer before it goes on). A
`turn.waiting` on tasks is read past: the turn continues when its tasks settle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from eve_runtime.client.parts import Event, InputRequest, TurnError, Usage
from eve_runtime.client.reducer import Conversation

__all__ = ["TurnResult", "TurnStatus", "TurnWatch"]

TurnStatus = Literal["completed", "failed", "cancelled", "waiting-for-input"]


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended (or paused for a person).

    Attributes:
        status: `completed`, `failed`, `cancelled`, or `waiting-for-input` (answer `pending` with
            `respond()`, then read the rest with `result(session_id, next_index)`).
        session_id: The session.
        turn_id: The turn, when one started.
        reply: The text of the turn's last completed reply (narration before tool calls left out).
        data: The turn's `result.completed` value (a turn with an output schema), else None.
        pending: The requests waiting for a person when the read stopped.
        usage: The session's running usage total at the end of the read.
        turn_usage: The usage of the model calls this read saw end (`step.completed`): the
            turn's, when the read started with the turn (after an answer to a request, the
            calls since the answer).
        error: Why the turn (or the session) failed.
        next_index: The cursor after the last event read: where the next read starts.
        events: The events read, in order.
    """

    status: TurnStatus
    session_id: str
    turn_id: str | None
    reply: str | None
    data: Any
    pending: tuple[InputRequest, ...]
    usage: Usage
    error: TurnError | None
    next_index: int
    events: tuple[Event, ...]
    turn_usage: Usage = field(default_factory=Usage)


class TurnWatch:
    """Reads events until a turn's boundary, and builds its [`TurnResult`][eve_runtime.client.result.TurnResult].

    With `delivery_id`, boundaries are ignored until an event carries that delivery id in
    `meta.deliveryIds`: the watch skips the end of a turn that was already running when the
    message was sent, and stops at the end of the turn that took the message. An answer to a
    pending request (`inputResponses`, or a plain-text answer) resumes the turn that asked, whose
    events keep that turn's delivery ids: do not pass the answer's delivery id then.
    `session.completed` and `session.failed` always stop the watch: nothing follows them.
    """

    def __init__(self, session_id: str, *, delivery_id: str | None = None) -> None:
        self.session_id = session_id
        self.delivery_id = delivery_id
        self.armed = delivery_id is None
        self.conversation = Conversation()
        self.events: list[Event] = []
        self.status: TurnStatus = "completed"
        self.finished = False
        self.turn_usage = Usage()
        """The usage of the model calls read so far (`step.completed`)."""

    def push(self, event: Event) -> bool:
        """Take one event; True once the turn reached its boundary (push nothing more after that)."""
        self.events.append(event)
        self.conversation.apply(event)
        meta = event.get("meta")
        delivery_ids = meta.get("deliveryIds") if isinstance(meta, dict) else None
        if not self.armed and isinstance(delivery_ids, list) and self.delivery_id in delivery_ids:
            self.armed = True
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        if self.armed and kind == "step.completed" and isinstance(data, dict) and isinstance(data.get("usage"), dict):
            self.turn_usage = self.turn_usage + Usage.from_wire(data["usage"])
        if kind == "turn.started":
            self.status = "completed"
        elif kind in ("turn.failed", "session.failed"):
            self.status = "failed"
        elif kind == "turn.cancelled":
            self.status = "cancelled"
        if kind in ("session.completed", "session.failed"):
            self.finished = True
        elif self.armed and kind == "session.waiting":
            self.finished = True
        elif self.armed and kind == "turn.waiting" and isinstance(data, dict) and data.get("on") == "input":
            self.status = "waiting-for-input"
            self.finished = True
        return self.finished

    def result(self, next_index: int) -> TurnResult:
        """The result of what was read (call it once `push` returned True, or when the stream ended)."""
        conversation = self.conversation
        return TurnResult(
            status=self.status,
            session_id=self.session_id,
            turn_id=conversation.turn_id,
            reply=conversation.reply(conversation.turn_id),
            data=conversation.result,
            pending=tuple(conversation.pending.values()),
            usage=conversation.usage,
            error=conversation.error if self.status == "failed" else None,
            next_index=next_index,
            events=tuple(self.events),
            turn_usage=self.turn_usage,
        )
