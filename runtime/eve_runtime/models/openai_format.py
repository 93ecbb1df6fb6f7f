"""eve's messages and tools in the OpenAI chat-completions format, and its stream read back as events.

This is litellm's input and output format, but nothing here imports litellm: requests go out as
OpenAI message and tool dicts, and each streamed chunk (a dict or an object with the same fields)
comes back as `ModelEvent`s, tool calls rebuilt from their deltas, usage and finish reason mapped.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from eve_runtime.messages import (
    AssistantMessage,
    Attachment,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from eve_runtime.models.base import (
    FinishReason,
    ModelEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinition,
    ToolInputDelta,
    Usage,
)

__all__ = [
    "ToolCallAssembler",
    "chunk_events",
    "content_part",
    "get_field",
    "map_finish_reason",
    "to_openai_messages",
    "to_openai_tools",
    "usage_of",
]

_FINISH_REASONS: dict[str, FinishReason] = {"stop": "stop", "length": "length", "content_filter": "content-filter"}
_FINISH_REASONS |= {"tool_calls": "tool-calls", "function_call": "tool-calls"}
# Spellings that are just the OpenAI name of eve's reason, so not worth keeping as provider_reason.
_PLAIN_REASONS = {"stop", "tool_calls", "length", "content_filter"}


MAX_IMAGE_BYTES = 3 * 1024 * 1024
"""The largest image sent as an image part (larger ones are only referenced: providers refuse them)."""
MAX_INLINE_TEXT_BYTES = 64 * 1024
"""The largest text-like file whose contents are sent as a text part."""
_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_TEXT_LIKE = frozenset({"application/json", "application/xml", "application/x-yaml", "application/yaml"})


def content_part(attachment: Attachment) -> dict[str, Any] | None:
    """An attachment as a litellm content part, or None for a file providers cannot read as one.

    Images (PNG, JPEG, GIF, WebP up to `MAX_IMAGE_BYTES`) are `image_url` parts, PDFs `file`
    parts (`file_data` for bytes, `file_id` for a URL), and small text-like files a text part
    holding their contents. Anything else is left to the `Attached file` line of the message
    text (the model can open it in the sandbox).
    """
    media = attachment.media_type
    source = attachment.url or (f"data:{media};base64,{attachment.data}" if attachment.data is not None else None)
    if source is None:
        return None
    if media in _IMAGES and (attachment.size or 0) <= MAX_IMAGE_BYTES:
        return {"type": "image_url", "image_url": {"url": source}}
    if media == "application/pdf":
        if attachment.url is not None:
            return {"type": "file", "file": {"file_id": attachment.url, "format": media}}
        return {"type": "file", "file": {"file_data": source, "filename": attachment.filename or "attachment.pdf"}}
    text_like = media.startswith("text/") or media in _TEXT_LIKE or media.endswith(("+json", "+xml"))
    if text_like and attachment.data is not None and (attachment.size or 0) <= MAX_INLINE_TEXT_BYTES:
        try:
            text = base64.b64decode(attachment.data).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        return {"type": "text", "text": f"Contents of {attachment.filename or 'the attached file'} ({media}):\n{text}"}
    return None


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Translate eve messages to OpenAI chat-completions message dicts (litellm's input format)."""
    result: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.attachments:
            parts = [{"type": "text", "text": message.content}]
            parts += [part for a in message.attachments if (part := content_part(a)) is not None]
            result.append({"role": "user", "content": parts})
        elif isinstance(message, (SystemMessage, UserMessage)):
            result.append({"role": message.role, "content": message.content})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                entry["content"] = message.content or None
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        # Invalid argument text is sent back as an empty object: several providers
                        # (through litellm) parse the arguments and would reject the whole request.
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for call in message.tool_calls
                ]
            result.append(entry)
        elif isinstance(message, ToolMessage):
            result.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "name": message.name, "content": message.content}
            )
        else:
            assert_never(message)
    return result


def to_openai_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """Translate tool definitions to OpenAI `{"type": "function", ...}` tools."""
    functions = [{"name": t.name, "description": t.description, "parameters": dict(t.input_schema)} for t in tools]
    return [{"type": "function", "function": function} for function in functions]


def map_finish_reason(raw: str | None, *, has_tool_calls: bool) -> tuple[FinishReason, str | None]:
    """Map a provider's finish reason to eve's, with the raw one when it says more.

    Args:
        raw: The OpenAI-style finish reason litellm reported (None when it reported none).
        has_tool_calls: Whether the answer contains tool calls (some providers say `stop` then).

    Returns:
        eve's finish reason and the provider's own (None when it is just the OpenAI spelling).
    """
    if raw is None:
        return ("tool-calls" if has_tool_calls else "stop"), None
    reason = _FINISH_REASONS.get(raw, "other")
    if reason == "stop" and has_tool_calls:
        return "tool-calls", raw
    return reason, (None if raw in _PLAIN_REASONS else raw)


@dataclass
class _PendingCall:
    index: int
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)
    started: bool = False


class ToolCallAssembler:
    """Rebuild tool calls from OpenAI-style deltas, keyed by their index."""

    def __init__(self) -> None:
        self.calls: list[_PendingCall] = []
        self._by_index: dict[int, _PendingCall] = {}

    def feed(self, delta: Any) -> Iterator[ModelEvent]:
        """The events of one tool-call delta: a call starts once both its id and its name are known."""
        index = get_field(delta, "index")
        index = index if isinstance(index, int) else 0
        call_id = get_field(delta, "id")
        function = get_field(delta, "function")
        name, arguments = get_field(function, "name"), get_field(function, "arguments")
        pending = self._by_index.get(index)
        # Some providers send every call whole under index 0: a new id there means a new call.
        if pending is None or (call_id and pending.id and call_id != pending.id and pending.started):
            pending = _PendingCall(index=index)
            self._by_index[index] = pending
            self.calls.append(pending)
        pending.id = pending.id or call_id or None
        pending.name = pending.name or name or None
        if arguments:
            pending.parts.append(arguments)
        if pending.started:
            if arguments:
                yield ToolInputDelta(call_id=self._id(pending), delta=arguments)
        elif pending.id and pending.name:
            yield from self._start(pending)

    def finish(self) -> Iterator[ModelEvent]:
        """At the end of the stream: start the calls not started yet, then finish every call, by index."""
        calls = sorted(self.calls, key=lambda c: c.index)  # stable: keeps arrival order within an index
        for pending in calls:
            if not pending.started:
                yield from self._start(pending)
        for pending in calls:
            yield ToolCallFinished(call=_parse_call(self._id(pending), pending.name or "", "".join(pending.parts)))

    def _start(self, pending: _PendingCall) -> Iterator[ModelEvent]:
        pending.started = True
        call_id = self._id(pending)
        yield ToolCallStarted(call_id=call_id, name=pending.name or "")
        text = "".join(pending.parts)
        if text:
            yield ToolInputDelta(call_id=call_id, delta=text)

    def _id(self, pending: _PendingCall) -> str:
        if pending.id is None:
            pending.id = f"call_{self.calls.index(pending)}"
        return pending.id


def _parse_call(call_id: str, name: str, text: str) -> ToolCall:
    if not text.strip():
        return ToolCall(id=call_id, name=name)
    try:
        arguments = json.loads(text)
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        return ToolCall(id=call_id, name=name, arguments=arguments)
    return ToolCall(id=call_id, name=name, invalid_arguments=text)


def get_field(obj: Any, key: str) -> Any:
    """`obj[key]` of a dict, else the attribute `key` (None when missing): chunks come as either."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(raw: Any) -> Usage:
    """A chunk's OpenAI-style `usage` as eve's `Usage` (cached and cache-write tokens included)."""
    details = get_field(raw, "prompt_tokens_details")
    cache_read = _int(get_field(details, "cached_tokens")) or _int(get_field(raw, "cache_read_input_tokens"))
    cache_write = (
        _int(get_field(details, "cache_write_tokens"))
        or _int(get_field(details, "cache_creation_tokens"))
        or _int(get_field(raw, "cache_creation_input_tokens"))
    )
    return Usage(
        input_tokens=_int(get_field(raw, "prompt_tokens")),
        output_tokens=_int(get_field(raw, "completion_tokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


def chunk_events(chunk: Any, tool_calls: ToolCallAssembler) -> Iterator[ModelEvent]:
    """The events of one streamed chunk: reasoning, text and tool-call deltas of its first choice."""
    for choice in (get_field(chunk, "choices") or ())[:1]:
        delta = get_field(choice, "delta")
        if delta is None:
            continue
        reasoning = get_field(delta, "reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            yield ReasoningDelta(text=reasoning)
        content = get_field(delta, "content")
        if isinstance(content, str) and content:
            yield TextDelta(text=content)
        for call_delta in get_field(delta, "tool_calls") or ():
            yield from tool_calls.feed(call_delta)
