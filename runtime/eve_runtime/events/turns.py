"""The events of a session's life, its turns and their steps: from `session.started` to `session.completed`.

Each class is one event type; its fields are the event's data and `wire()` its `data` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from eve_runtime.checkpoint import ParentLink, UsageTotals
from eve_runtime.events.catalog import EventType, StepAt, StreamEvent, TurnAt
from eve_runtime.events.usage import call_usage_wire, totals_wire
from eve_runtime.models.base import Usage

__all__ = [
    "CompactionCompleted",
    "CompactionRequested",
    "ContextCleared",
    "MessageAppended",
    "MessageCompleted",
    "MessageReceived",
    "ReasoningAppended",
    "ReasoningCompleted",
    "ResultCompleted",
    "SessionCompleted",
    "SessionFailed",
    "SessionStarted",
    "SessionWaiting",
    "StepCompleted",
    "StepFailed",
    "StepStarted",
    "TurnCancelled",
    "TurnCompleted",
    "TurnFailed",
    "TurnStarted",
    "TurnWaiting",
]


# -- the session -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionStarted(StreamEvent):
    """The session's first event, with its first turn: who runs it, and for a child whose call it serves."""

    type: ClassVar[EventType] = "session.started"
    runtime: dict[str, Any]
    """`agentId`, `agentName`, `eveVersion`."""
    predecessor: str | None = None
    """The stranded session this one replaced at its channel address."""
    parent: ParentLink | None = None
    """For a subagent's session: the parent call it works for."""
    schedule: dict[str, Any] | None = None
    """For a session a schedule's fire started: `name`, `fireAt` (ISO 8601, UTC) and `manual`."""
    trace: dict[str, Any] | None = None
    """The session's trace coordinates (`eve_runtime.telemetry.ids.trace_wire`)."""

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"runtime": self.runtime}
        if self.trace is not None:
            data["trace"] = self.trace
        if self.predecessor is not None:
            data["predecessor"] = {"sessionId": self.predecessor}
        if self.schedule is not None:
            data["schedule"] = self.schedule
        if self.parent is not None:
            data["invocation"] = {
                "kind": "subagent",
                "name": self.parent.name,
                "parentCallId": self.parent.call_id,
                "parentSessionId": self.parent.session_id,
                "parentTurnId": self.parent.turn_id,
            }
        return data


@dataclass(frozen=True, slots=True)
class SessionWaiting(StreamEvent):
    """The session is idle until the next message."""

    type: ClassVar[EventType] = "session.waiting"
    session_id: str
    usage: UsageTotals

    def wire(self) -> dict[str, Any]:
        return {"continuationToken": self.session_id, "usage": totals_wire(self.usage), "wait": "next-user-message"}


@dataclass(frozen=True, slots=True)
class SessionCompleted(StreamEvent):
    """The session's last event (its data is kept). Without `usage` for a session retired unrun."""

    type: ClassVar[EventType] = "session.completed"
    usage: UsageTotals | None = None

    def wire(self) -> dict[str, Any]:
        return {"usage": totals_wire(self.usage)} if self.usage is not None else {}


@dataclass(frozen=True, slots=True)
class SessionFailed(StreamEvent):
    """The session's last event when a failure ended it (after `turn.failed` with `terminal: true`).

    Also how a stranded session's end is recorded (`code: "session_stranded"`, `details.trigger`),
    without `usage`: none of its code ran here.
    """

    type: ClassVar[EventType] = "session.failed"
    session_id: str
    code: str
    message: str
    details: dict[str, Any] | None = None
    usage: UsageTotals | None = None

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            data["details"] = self.details
        data["sessionId"] = self.session_id
        if self.usage is not None:
            data["usage"] = totals_wire(self.usage)
        return data


# -- turns -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnStarted(StreamEvent):
    """A turn opened (its first message follows)."""

    type: ClassVar[EventType] = "turn.started"
    at: TurnAt
    trace: dict[str, Any] | None = None
    """The turn's trace coordinates (`eve_runtime.telemetry.ids.trace_wire`)."""

    def wire(self) -> dict[str, Any]:
        data = self.at.wire()
        if self.trace is not None:
            data["trace"] = self.trace
        return data


@dataclass(frozen=True, slots=True)
class MessageReceived(StreamEvent):
    """A message opened the turn, or joined it (steering)."""

    type: ClassVar[EventType] = "message.received"
    at: TurnAt
    message: str
    parts: list[dict[str, Any]]

    def wire(self) -> dict[str, Any]:
        return {"message": self.message, "parts": self.parts, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class TurnWaiting(StreamEvent):
    """The turn is parked: on a person (`input`) or on its tasks (`tasks`)."""

    type: ClassVar[EventType] = "turn.waiting"
    at: TurnAt
    on: Literal["input", "tasks"]
    usage: UsageTotals

    def wire(self) -> dict[str, Any]:
        return {
            "on": self.on,
            "sequence": self.at.sequence,
            "turnId": self.at.turn_id,
            "usage": totals_wire(self.usage),
        }


@dataclass(frozen=True, slots=True)
class TurnCompleted(StreamEvent):
    """The turn ended with the model's reply."""

    type: ClassVar[EventType] = "turn.completed"
    at: TurnAt

    def wire(self) -> dict[str, Any]:
        return self.at.wire()


@dataclass(frozen=True, slots=True)
class TurnCancelled(StreamEvent):
    """The turn was stopped by a cancel (or a clear)."""

    type: ClassVar[EventType] = "turn.cancelled"
    at: TurnAt

    def wire(self) -> dict[str, Any]:
        return self.at.wire()


@dataclass(frozen=True, slots=True)
class TurnFailed(StreamEvent):
    """The turn failed; `terminal` when that ends the session (`session.failed` follows, else `session.waiting`)."""

    type: ClassVar[EventType] = "turn.failed"
    at: TurnAt
    code: str
    message: str
    details: dict[str, Any] | None = None
    terminal: bool = False

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            data["details"] = self.details
        return {**data, "sequence": self.at.sequence, "terminal": self.terminal, "turnId": self.at.turn_id}


# -- steps -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepStarted(StreamEvent):
    """A step began: one model call (with `modelId`), then its tool calls."""

    type: ClassVar[EventType] = "step.started"
    at: StepAt
    model_id: str

    def wire(self) -> dict[str, Any]:
        return {"modelId": self.model_id, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class StepCompleted(StreamEvent):
    """A step's model call ended (`finishReason`), with its usage when it produced output."""

    type: ClassVar[EventType] = "step.completed"
    at: StepAt
    finish_reason: str
    usage: Usage | None = None
    cost_usd: float | None = None

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"finishReason": self.finish_reason, **self.at.wire()}
        if self.usage is not None:
            data["usage"] = call_usage_wire(self.usage, self.cost_usd)
        return data


@dataclass(frozen=True, slots=True)
class StepFailed(StreamEvent):
    """The step failed (`code`, `message`, and `details` when there are any)."""

    type: ClassVar[EventType] = "step.failed"
    at: StepAt
    code: str
    message: str
    details: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            data["details"] = self.details
        return {**data, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class ReasoningAppended(StreamEvent):
    """A piece of the model's reasoning, as it streams."""

    type: ClassVar[EventType] = "reasoning.appended"
    at: StepAt
    delta: str

    def wire(self) -> dict[str, Any]:
        return {"reasoningDelta": self.delta, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class ReasoningCompleted(StreamEvent):
    """The step's whole reasoning."""

    type: ClassVar[EventType] = "reasoning.completed"
    at: StepAt
    reasoning: str

    def wire(self) -> dict[str, Any]:
        return {"reasoning": self.reasoning, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class MessageAppended(StreamEvent):
    """A piece of the model's reply, as it streams."""

    type: ClassVar[EventType] = "message.appended"
    at: StepAt
    delta: str

    def wire(self) -> dict[str, Any]:
        return {"messageDelta": self.delta, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class MessageCompleted(StreamEvent):
    """The step's whole reply text."""

    type: ClassVar[EventType] = "message.completed"
    at: StepAt
    finish_reason: str
    message: str

    def wire(self) -> dict[str, Any]:
        return {"finishReason": self.finish_reason, "message": self.message, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class ResultCompleted(StreamEvent):
    """The turn's structured result (its `outputSchema`)."""

    type: ClassVar[EventType] = "result.completed"
    at: StepAt
    result: Any

    def wire(self) -> dict[str, Any]:
        return {"result": self.result, **self.at.wire()}


# -- the context -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionRequested(StreamEvent):
    """Older messages are about to be summarized (before a model call, or on request)."""

    type: ClassVar[EventType] = "compaction.requested"
    at: StepAt
    session_id: str
    model_id: str
    input_tokens: float
    """The estimated size of the context that prompted it."""

    def wire(self) -> dict[str, Any]:
        return {**_compaction(self.at, self.session_id, self.model_id), "usageInputTokens": self.input_tokens}


@dataclass(frozen=True, slots=True)
class CompactionCompleted(StreamEvent):
    """The older messages were replaced by their summary."""

    type: ClassVar[EventType] = "compaction.completed"
    at: StepAt
    session_id: str
    model_id: str

    def wire(self) -> dict[str, Any]:
        return _compaction(self.at, self.session_id, self.model_id)


def _compaction(at: StepAt, session_id: str, model_id: str) -> dict[str, Any]:
    return {
        "modelId": model_id,
        "sequence": at.sequence,
        "sessionId": session_id,
        "stepIndex": at.step_index,
        "turnId": at.turn_id,
    }


@dataclass(frozen=True, slots=True)
class ContextCleared(StreamEvent):
    """The history was emptied (`POST .../clear`); the event carries the next turn's id."""

    type: ClassVar[EventType] = "context.cleared"
    at: TurnAt
    session_id: str

    def wire(self) -> dict[str, Any]:
        return {"sequence": self.at.sequence, "sessionId": self.session_id, "turnId": self.at.turn_id}
