"""The conversation a model sees: system, user, assistant and tool messages.

These are the provider-neutral messages eve keeps in a session's history and hands to a
[`Model`][eve_runtime.models.Model]. Adapters translate them to a provider's format. They are
frozen pydantic models so that history round-trips through the store unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "Attachment",
    "Message",
    "MessageAdapter",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SystemMessage(_Frozen):
    """Instructions from the agent's author (or the framework)."""

    role: Literal["system"] = "system"
    content: str


class Attachment(_Frozen):
    """A file or image the model sees beside a user message's text: its bytes (base64) or a URL."""

    media_type: str
    filename: str | None = None
    size: int | None = None
    """The byte count, when the bytes were sent (not for a URL)."""
    data: str | None = None
    """The bytes, base64."""
    url: str | None = None
    """An `http(s)` URL the provider fetches (eve never does)."""


class UserMessage(_Frozen):
    """A message from the person (or system) talking to the agent."""

    role: Literal["user"] = "user"
    content: str
    attachments: tuple[Attachment, ...] = ()
    """Files and images sent with it, passed to the model as content parts."""


class ToolCall(_Frozen):
    """One tool call the model asked for."""

    id: str
    """The call id; tool results answer it."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The parsed JSON object of arguments."""
    invalid_arguments: str | None = None
    """The raw argument text when the model sent something that is not a JSON object (then `arguments` is empty)."""


class AssistantMessage(_Frozen):
    """What the model answered: text, reasoning, and the tool calls it asked for."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class ToolMessage(_Frozen):
    """The result of one tool call, as the model sees it."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    """The result as text: compact JSON for structured results, or the error text."""
    is_error: bool = False


Message = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]
"""Any message of a conversation, discriminated on `role`."""

MessageAdapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
"""Validates and serializes a list of messages (for checkpoints and history)."""
