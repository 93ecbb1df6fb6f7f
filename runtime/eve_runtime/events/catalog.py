"""Every event type of the stream (version 26), named once, and what all events share.

An event is built by its constructor, a small frozen dataclass in `events.turns`,
`events.actions` or `events.tasks` whose fields are the event's data; `wire()` turns it into the
event's `data` object, with eve's keys in eve's order. Sessions emit nothing else: the emitter
takes a [`StreamEvent`][eve_runtime.events.catalog.StreamEvent], never a name and a dict.

Most events say where in the session they happened: a turn ([`TurnAt`]), a step of it
([`StepAt`]), a tool call in a step ([`CallAt`]), or a task's call ([`TaskAt`]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from eve_runtime.events.names import (
    EVENT_TYPES,
    EXTENSION_EVENT_TYPES,
    EveEventType,
    EventType,
    ExtensionEventType,
)

if TYPE_CHECKING:  # only for annotations: importing eve_runtime stays light
    from eve_runtime.checkpoint import TurnState


__all__ = [
    "DELTA_FIELDS",
    "EVENT_TYPES",
    "EXTENSION_EVENT_TYPES",
    "STREAM_VERSION",
    "CallAt",
    "EveEventType",
    "EventType",
    "ExtensionEventType",
    "StepAt",
    "StreamEvent",
    "TaskAt",
    "TurnAt",
]

STREAM_VERSION = 26
"""The `x-eve-stream-version` this runtime speaks."""

DELTA_FIELDS: dict[EventType, str] = {
    "message.appended": "messageDelta",
    "reasoning.appended": "reasoningDelta",
    "action.input.appended": "inputTextDelta",
}
"""Delta events and the field holding their text (the emitter merges adjacent ones)."""


class StreamEvent:
    """One event a session emits: its `type`, and its `data` as `wire()` builds it."""

    __slots__ = ()
    type: ClassVar[EventType]

    def wire(self) -> dict[str, Any]:
        """The event's `data` object, as the stream carries it."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class TurnAt:
    """A turn of a session: its sequence number and id."""

    sequence: int
    turn_id: str

    @classmethod
    def of(cls, turn: TurnState) -> TurnAt:
        """Where `turn` is."""
        return cls(turn.sequence, turn.turn_id)

    def wire(self) -> dict[str, Any]:
        return {"sequence": self.sequence, "turnId": self.turn_id}

    def step(self, step_index: int) -> StepAt:
        """A step of this turn."""
        return StepAt(self.sequence, step_index, self.turn_id)


@dataclass(frozen=True, slots=True)
class StepAt:
    """A step (one model call and its tool calls) of a turn."""

    sequence: int
    step_index: int
    turn_id: str

    @classmethod
    def of(cls, turn: TurnState, step_index: int | None = None) -> StepAt:
        """Where step `step_index` of `turn` is (its current step by default)."""
        return cls(turn.sequence, turn.step_index if step_index is None else step_index, turn.turn_id)

    def wire(self) -> dict[str, Any]:
        return {"sequence": self.sequence, "stepIndex": self.step_index, "turnId": self.turn_id}

    def call(self, call_id: str) -> CallAt:
        """A tool call of this step."""
        return CallAt(call_id, self)


@dataclass(frozen=True, slots=True)
class CallAt:
    """A tool call of a step."""

    call_id: str
    step: StepAt


@dataclass(frozen=True, slots=True)
class TaskAt:
    """A task's current call, in the turn that gave it (where a child's relayed prompts show)."""

    call_id: str
    sequence: int
    task_id: str
    turn_id: str

    def wire(self) -> dict[str, Any]:
        return {"callId": self.call_id, "sequence": self.sequence, "taskId": self.task_id, "turnId": self.turn_id}
