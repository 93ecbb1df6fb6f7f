"""Typed stream events: one frozen dataclass per main event type, each keeping its `raw` dict.

[`parse_event`][eve_runtime.client.events.parse_event] turns a decoded NDJSON event into the
class of its `type` (a [`StreamEvent`][eve_runtime.client.events.StreamEvent] for any other
type), so code can `match` on events and read typed fields instead of indexing dicts:

```python
match parse_event(raw):
    case MessageAppended(delta=delta):
        print(delta, end="")
    case ActionResult(tool_name=name, output=output):
        print(name, "->", output)
```

The fields are read leniently: a missing or mistyped field is None (or empty), never an error,
and everything else the event carries stays in `raw` (and `data`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from eve_runtime.client.parts import Event, InputRequest, TurnError, Usage

__all__ = [
    "ActionInputAppended",
    "ActionResult",
    "ActionsRequested",
    "InputRequested",
    "InputResolved",
    "MessageAppended",
    "MessageCompleted",
    "MessageReceived",
    "ReasoningAppended",
    "ReasoningCompleted",
    "SessionCompleted",
    "SessionFailed",
    "SessionStarted",
    "SessionWaiting",
    "StepCompleted",
    "StepFailed",
    "StepStarted",
    "StreamEvent",
    "TaskSettled",
    "TaskStarted",
    "TurnCancelled",
    "TurnCompleted",
    "TurnFailed",
    "TurnStarted",
    "TurnWaiting",
    "parse_event",
]


Readers = dict[str, tuple[str, Callable[[Any], Any]]]
"""Fields of an event class, each read from a key of `data` by a lenient reader."""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _usage(value: Any) -> Usage | None:
    return Usage.from_wire(value) if isinstance(value, dict) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value: Any) -> tuple[dict[str, Any], ...]:
    return tuple(item for item in value if isinstance(item, dict)) if isinstance(value, list) else ()


def _any(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class StreamEvent:
    """An event of the stream: its `type`, `data`, `meta` fields, and the `raw` dict it was read from.

    Events of a type without a class of its own (`compaction.completed`, `agent.started`, ...)
    are plain `StreamEvent`s.
    """

    type: str
    raw: Event = field(repr=False)
    id: str | None = None
    at: str | None = None
    delivery_ids: tuple[str, ...] = ()
    turn_id: str | None = None

    TYPE: ClassVar[str] = ""
    READ: ClassVar[Readers] = {}
    """The class's own fields: each read from a key of `data` by a lenient reader."""

    @property
    def data(self) -> dict[str, Any]:
        """The event's `data` object (empty when it has none)."""
        return _dict(self.raw.get("data"))

    @classmethod
    def fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The class's own fields, read from `data`."""
        return {name: read(data.get(key)) for name, (key, read) in cls.READ.items()}


@dataclass(frozen=True)
class SessionStarted(StreamEvent):
    """`session.started`: the first event of a session."""

    TYPE: ClassVar[str] = "session.started"


@dataclass(frozen=True)
class TurnStarted(StreamEvent):
    """`turn.started`."""

    TYPE: ClassVar[str] = "turn.started"


@dataclass(frozen=True)
class MessageReceived(StreamEvent):
    """`message.received`: the message a turn took (`text`), as the model reads it."""

    TYPE: ClassVar[str] = "message.received"
    text: str | None = None
    READ: ClassVar[Readers] = {"text": ("message", _str)}


@dataclass(frozen=True)
class _InStep(StreamEvent):
    step_index: int | None = None


@dataclass(frozen=True)
class StepStarted(_InStep):
    """`step.started`: a model call begins (`model_id`)."""

    TYPE: ClassVar[str] = "step.started"
    model_id: str | None = None
    READ: ClassVar[Readers] = {"model_id": ("modelId", _str)}


@dataclass(frozen=True)
class MessageAppended(_InStep):
    """`message.appended`: a piece (`delta`) of the assistant's text as it streams."""

    TYPE: ClassVar[str] = "message.appended"
    delta: str = ""
    READ: ClassVar[Readers] = {"delta": ("messageDelta", _text)}


@dataclass(frozen=True)
class MessageCompleted(_InStep):
    """`message.completed`: a block of assistant text, whole; `finish_reason` `tool-calls` marks narration."""

    TYPE: ClassVar[str] = "message.completed"
    text: str = ""
    finish_reason: str | None = None
    READ: ClassVar[Readers] = {"text": ("message", _text), "finish_reason": ("finishReason", _str)}


@dataclass(frozen=True)
class ReasoningAppended(_InStep):
    """`reasoning.appended`: a piece of the model's reasoning."""

    TYPE: ClassVar[str] = "reasoning.appended"
    delta: str = ""
    READ: ClassVar[Readers] = {"delta": ("reasoningDelta", _text)}


@dataclass(frozen=True)
class ReasoningCompleted(_InStep):
    """`reasoning.completed`: a block of reasoning, whole."""

    TYPE: ClassVar[str] = "reasoning.completed"
    text: str = ""
    READ: ClassVar[Readers] = {"text": ("reasoning", _text)}


@dataclass(frozen=True)
class ActionInputAppended(_InStep):
    """`action.input.appended`: a piece of a tool call's input as the model writes it."""

    TYPE: ClassVar[str] = "action.input.appended"
    call_id: str | None = None
    tool_name: str | None = None
    delta: str = ""
    READ: ClassVar[Readers] = {
        "call_id": ("callId", _str),
        "tool_name": ("toolName", _str),
        "delta": ("inputTextDelta", _text),
    }


@dataclass(frozen=True)
class ActionsRequested(_InStep):
    """`actions.requested`: the calls of a step, each `{"callId", "toolName", "input", "kind"}`."""

    TYPE: ClassVar[str] = "actions.requested"
    actions: tuple[dict[str, Any], ...] = ()
    READ: ClassVar[Readers] = {"actions": ("actions", _dicts)}


@dataclass(frozen=True)
class ActionResult(_InStep):
    """`action.result`: a call's outcome (`status` `completed`, `failed` or `rejected`)."""

    TYPE: ClassVar[str] = "action.result"
    call_id: str | None = None
    tool_name: str | None = None
    status: str | None = None
    output: Any = None
    error: dict[str, Any] | None = None

    @classmethod
    def fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        result = _dict(data.get("result"))
        name = _str(result.get("toolName")) or _str(result.get("subagentName")) or _str(result.get("name"))
        error = data.get("error")
        return {
            "call_id": _str(result.get("callId")),
            "tool_name": name,
            "status": _str(data.get("status")),
            "output": result.get("output"),
            "error": error if isinstance(error, dict) else None,
        }


@dataclass(frozen=True)
class InputRequested(StreamEvent):
    """`input.requested`: requests for a person (approvals, questions, budget prompts)."""

    TYPE: ClassVar[str] = "input.requested"
    requests: tuple[InputRequest, ...] = ()

    @classmethod
    def fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        entries = [entry for entry in data.get("requests") or [] if isinstance(entry, dict)]
        return {"requests": tuple(InputRequest.from_wire(entry, data) for entry in entries)}


@dataclass(frozen=True)
class InputResolved(StreamEvent):
    """`input.resolved`: how requests were answered, each `{"requestId", "outcome", ...}`."""

    TYPE: ClassVar[str] = "input.resolved"
    resolutions: tuple[dict[str, Any], ...] = ()
    READ: ClassVar[Readers] = {"resolutions": ("resolutions", _dicts)}


@dataclass(frozen=True)
class TaskStarted(StreamEvent):
    """`task.started`: a call went to the background (a subagent, or a `task=True` tool)."""

    TYPE: ClassVar[str] = "task.started"
    task_id: str | None = None
    name: str | None = None
    READ: ClassVar[Readers] = {"task_id": ("taskId", _str), "name": ("name", _str)}


@dataclass(frozen=True)
class TaskSettled(StreamEvent):
    """`task.settled`: a task's outcome."""

    TYPE: ClassVar[str] = "task.settled"
    task_id: str | None = None
    status: str | None = None
    output: Any = None
    READ: ClassVar[Readers] = {"task_id": ("taskId", _str), "status": ("status", _str), "output": ("output", _any)}


@dataclass(frozen=True)
class StepCompleted(_InStep):
    """`step.completed`: a model call ended; `usage` is that call's tokens (and cost)."""

    TYPE: ClassVar[str] = "step.completed"
    finish_reason: str | None = None
    usage: Usage | None = None
    READ: ClassVar[Readers] = {"finish_reason": ("finishReason", _str), "usage": ("usage", _usage)}


@dataclass(frozen=True)
class _Failure(StreamEvent):
    error: TurnError | None = None

    @classmethod
    def fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        terminal = data.get("terminal") is True or cls.TYPE == "session.failed"
        error = TurnError(str(data.get("code", "")), str(data.get("message", "")), terminal=terminal)
        return {"error": error}


@dataclass(frozen=True)
class StepFailed(_Failure, _InStep):
    """`step.failed`: a model call failed (the turn may retry it)."""

    TYPE: ClassVar[str] = "step.failed"


@dataclass(frozen=True)
class TurnWaiting(StreamEvent):
    """`turn.waiting`: the turn waits, `on` `input` (a person) or `tasks`."""

    TYPE: ClassVar[str] = "turn.waiting"
    on: str | None = None
    READ: ClassVar[Readers] = {"on": ("on", _str)}


@dataclass(frozen=True)
class TurnCompleted(StreamEvent):
    """`turn.completed`."""

    TYPE: ClassVar[str] = "turn.completed"


@dataclass(frozen=True)
class TurnCancelled(StreamEvent):
    """`turn.cancelled`."""

    TYPE: ClassVar[str] = "turn.cancelled"


@dataclass(frozen=True)
class TurnFailed(_Failure):
    """`turn.failed`: why, in `error`."""

    TYPE: ClassVar[str] = "turn.failed"


@dataclass(frozen=True)
class SessionWaiting(StreamEvent):
    """`session.waiting`: the turn ended and the session waits; `usage` is the session's total."""

    TYPE: ClassVar[str] = "session.waiting"
    usage: Usage | None = None
    READ: ClassVar[Readers] = {"usage": ("usage", _usage)}


@dataclass(frozen=True)
class SessionCompleted(SessionWaiting):
    """`session.completed`: the session ended for good (a reset, a timeout)."""

    TYPE: ClassVar[str] = "session.completed"


@dataclass(frozen=True)
class SessionFailed(_Failure):
    """`session.failed`: the session ended with an error."""

    TYPE: ClassVar[str] = "session.failed"


_CLASSES: dict[str, type[StreamEvent]] = {
    cls.TYPE: cls
    for cls in (
        SessionStarted, TurnStarted, MessageReceived, StepStarted, MessageAppended, MessageCompleted,
        ReasoningAppended, ReasoningCompleted, ActionInputAppended, ActionsRequested, ActionResult,
        InputRequested, InputResolved, TaskStarted, TaskSettled, StepCompleted, StepFailed, TurnWaiting,
        TurnCompleted, TurnCancelled, TurnFailed, SessionWaiting, SessionCompleted, SessionFailed,
    )
}  # fmt: skip


def parse_event(raw: Mapping[str, Any]) -> StreamEvent:
    """The typed event of a decoded stream event (its class by `type`; `StreamEvent` for other types)."""
    event = dict(raw)
    kind = str(event.get("type", ""))
    cls = _CLASSES.get(kind, StreamEvent)
    data, meta = _dict(event.get("data")), _dict(event.get("meta"))
    ids = meta.get("deliveryIds")
    common: dict[str, Any] = {
        "type": kind,
        "raw": event,
        "id": _str(meta.get("id")),
        "at": _str(meta.get("at")),
        "delivery_ids": tuple(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else (),
        "turn_id": _str(data.get("turnId")),
    }
    if issubclass(cls, _InStep):
        common["step_index"] = _int(data.get("stepIndex"))
    return cls(**common, **cls.fields(data))
