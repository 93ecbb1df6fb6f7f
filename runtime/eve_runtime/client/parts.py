"""The pieces of a conversation as the reducer builds them from stream events.

Everything here is plain data: a [`Conversation`][eve_runtime.client.reducer.Conversation]
creates and updates these objects as events arrive, and a renderer only reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Event",
    "InputRequest",
    "Item",
    "Message",
    "Reasoning",
    "Task",
    "ToolCall",
    "ToolCallState",
    "TurnError",
    "Usage",
]

Event = dict[str, Any]
"""One stream event as decoded from its NDJSON line: `{"type", "data", "meta": {"id", "at", ...}}`."""

BlockState = Literal["streaming", "completed", "interrupted"]
ToolCallState = Literal[
    "input-streaming", "input-available", "output-partial", "completed", "failed", "rejected", "abandoned"
]


@dataclass
class Usage:
    """Token counts (and the cost, when a model reported one)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Usage:
        """Read `{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd?}` (missing counts are 0)."""

        def count(key: str) -> int:
            value = data.get(key)
            return int(value) if isinstance(value, int | float) else 0

        cost = data.get("costUsd")
        return cls(
            input_tokens=count("inputTokens"),
            output_tokens=count("outputTokens"),
            cache_read_tokens=count("cacheReadTokens"),
            cache_write_tokens=count("cacheWriteTokens"),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=cost,
        )


@dataclass
class Message:
    """A user message (`message.received`) or a block of assistant text.

    An assistant block grows with each `message.appended` while `state` is `streaming`; its
    `message.completed` sets the final text. A block whose step ended without completing it (a
    failure, a cancel, a retried step) is `interrupted`. `finish_reason` `tool-calls` marks
    narration: text the model wrote before calling tools.
    """

    role: Literal["user", "assistant"]
    text: str
    turn_id: str | None = None
    step_index: int | None = None
    state: BlockState = "completed"
    finish_reason: str | None = None

    @property
    def narration(self) -> bool:
        """Whether this is text before tool calls rather than a reply."""
        return self.finish_reason == "tool-calls"


@dataclass
class Reasoning:
    """A block of the model's reasoning (`reasoning.appended`, `reasoning.completed`)."""

    text: str
    turn_id: str | None = None
    step_index: int | None = None
    state: BlockState = "streaming"


@dataclass
class ToolCall:
    """One call the model made, keyed by its `callId`.

    `input_text` accumulates the streamed input (`action.input.appended`); `input` is the validated
    input of `actions.requested`; `partial` the newest `action.partial` output; `output`, `error`
    and the final `state` come from `action.result` (`abandoned` for a call a crash interrupted:
    recovery closed it without running it again). `approval` follows the call's approval
    request, if it had one: `pending`, then the outcome of `input.resolved` (`approved`, ...).
    """

    call_id: str
    name: str
    kind: str = "tool-call"
    state: ToolCallState = "input-streaming"
    input_text: str = ""
    input: dict[str, Any] | None = None
    partial: Any = None
    output: Any = None
    error: dict[str, Any] | None = None
    turn_id: str | None = None
    step_index: int | None = None
    approval: str | None = None
    request_id: str | None = None
    task_id: str | None = None


@dataclass
class InputRequest:
    """A request for a person (`input.requested`): an approval, a question, a budget prompt.

    Answer it with `respond(session_id, [{"requestId": request_id, "optionId": ...}])` or, where
    `allow_freeform` is true, `{"requestId": ..., "text": ...}`.
    """

    request_id: str
    kind: str
    prompt: str | None = None
    options: list[dict[str, Any]] = field(default_factory=list)
    allow_freeform: bool = False
    call_id: str | None = None
    tool_name: str | None = None
    task_id: str | None = None
    """Set when the request was relayed from a task (a subagent's approval or question)."""
    turn_id: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    """The request exactly as the event carried it."""

    @classmethod
    def from_wire(cls, request: Mapping[str, Any], data: Mapping[str, Any]) -> InputRequest:
        """One entry of `input.requested.data.requests` (with the event's `taskId` and `turnId`)."""
        given = request.get("action")
        action: Mapping[str, Any] = given if isinstance(given, dict) else {}
        options = [option for option in request.get("options") or [] if isinstance(option, dict)]
        return cls(
            request_id=str(request.get("requestId", "")),
            kind=str(request.get("kind", "")),
            prompt=request["prompt"] if isinstance(request.get("prompt"), str) else None,
            options=options,
            allow_freeform=bool(request.get("allowFreeform", False)),
            call_id=_text(action.get("callId")) or _text(data.get("callId")),
            tool_name=_text(action.get("toolName")),
            task_id=_text(data.get("taskId")),
            turn_id=_text(data.get("turnId")),
            raw=dict(request),
        )

    @property
    def option_ids(self) -> list[str]:
        """The ids of the options, in order."""
        return [str(option.get("id")) for option in self.options if option.get("id") is not None]


@dataclass
class Task:
    """Work a call started in the background (`task.started` ... `task.settled`).

    For an agent task, `child_session_id` and `stream_path` (from `agent.started`) name the child
    session and its stream.
    """

    task_id: str
    call_id: str | None = None
    name: str | None = None
    kind: str | None = None
    status: Literal["working", "completed", "failed", "cancelled"] = "working"
    output: Any = None
    error: dict[str, Any] | None = None
    turn_id: str | None = None
    child_session_id: str | None = None
    stream_path: str | None = None


@dataclass(frozen=True)
class TurnError:
    """Why a turn or the session failed (`turn.failed`, `session.failed`)."""

    code: str
    message: str
    terminal: bool = False
    """Whether the session failed with it (no more turns)."""


Item = Message | Reasoning | ToolCall
"""An entry of the conversation's timeline, in the order it first appeared."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
