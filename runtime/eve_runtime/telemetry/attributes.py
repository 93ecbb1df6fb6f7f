"""Span attributes: the GenAI semantic conventions (`gen_ai.*`), eve's own (`agent.*`), and recorded content.

Token counts go on both `gen_ai.usage.*` (the OpenTelemetry GenAI conventions) and eve's
`agent.usage.*`; cost on `gen_ai.usage.cost` and `agent.usage.cost_usd`, as eve's spans carry
them. Recorded prompts and outputs are JSON in the GenAI message shape, masked by
`eve_runtime.redaction` (a secret never reaches a span) and cut at `MAX_CONTENT` characters.
"""

from __future__ import annotations

import json
from typing import Any

from eve_runtime.redaction import REDACTOR

__all__ = [
    "MAX_CONTENT",
    "call_usage",
    "step_usage",
    "SCHEMA_VERSION",
    "content",
    "identity",
    "naming",
    "provider_of",
    "text_message",
    "tool_calls_message",
    "tool_result_message",
    "usage_attributes",
]

MAX_CONTENT = 16_384
"""Characters of one recorded content attribute; longer content ends with `…`."""
SCHEMA_VERSION = 1
"""`agent.trace.schema.version` of the spans written here."""

AttributeValue = str | int | float | bool | list[str]


def naming(name: str, operation: str | None = None) -> dict[str, AttributeValue]:
    """`operation.name` and `resource.name`, which some backends (Datadog) read instead of the span name."""
    return {"operation.name": operation or name, "resource.name": name}


def identity(session_id: str, parent: Any = None) -> dict[str, AttributeValue]:
    """Which session (and, for a child, which parent call) a span belongs to."""
    attributes: dict[str, AttributeValue] = {
        "agent.trace.schema.version": SCHEMA_VERSION,
        "agent.run.id": session_id,
        "gen_ai.conversation.id": session_id,
        "agent.framework.name": "eve",
    }
    if parent is not None:  # a ParentLink: the parent's session and call
        attributes["agent.parent_run.id"] = parent.session_id
        attributes["agent.parent_call.id"] = parent.call_id
    return attributes


def provider_of(model_id: str) -> str:
    """The provider (`gen_ai.system`) of a litellm model id: its prefix (`openai/gpt-4o`), else the id (`test`)."""
    return model_id.split("/", 1)[0] if "/" in model_id else model_id


def usage_attributes(
    input_tokens: int,
    output_tokens: int,
    cache_read: int = 0,
    cache_write: int = 0,
    cost_usd: float | None = None,
) -> dict[str, AttributeValue]:
    """Token counts and cost, as GenAI and eve attributes."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
        "agent.usage.input_tokens": input_tokens,
        "agent.usage.output_tokens": output_tokens,
    }
    if cache_read:
        attributes["gen_ai.usage.cache_read.input_tokens"] = cache_read
        attributes["agent.usage.cache_read_tokens"] = cache_read
    if cache_write:
        attributes["gen_ai.usage.cache_write.input_tokens"] = cache_write
        attributes["agent.usage.cache_write_tokens"] = cache_write
    if cost_usd is not None:
        attributes["gen_ai.usage.cost"] = cost_usd
        attributes["agent.usage.cost_usd"] = cost_usd
    return attributes


def call_usage(
    input_tokens: int, output_tokens: int, cache_read: int, cache_write: int, cost_usd: float | None
) -> dict[str, AttributeValue]:
    """A model call's tokens and cost, as the GenAI conventions name them (the hot path: no duplicates)."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
    }
    if cache_read:
        attributes["gen_ai.usage.cache_read.input_tokens"] = cache_read
    if cache_write:
        attributes["gen_ai.usage.cache_write.input_tokens"] = cache_write
    if cost_usd is not None:
        attributes["gen_ai.usage.cost"] = cost_usd
    return attributes


def step_usage(input_tokens: int, output_tokens: int, cost_usd: float | None) -> dict[str, AttributeValue]:
    """A step's tokens and cost, as eve's `agent.step` spans name them."""
    attributes: dict[str, AttributeValue] = {
        "agent.usage.input_tokens": input_tokens,
        "agent.usage.output_tokens": output_tokens,
    }
    if cost_usd is not None:
        attributes["agent.usage.cost_usd"] = cost_usd
    return attributes


def content(value: Any) -> str:
    """Content for a span: JSON (a string stays as it is), secrets masked, cut at `MAX_CONTENT`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = REDACTOR.text(text)
    return text if len(text) <= MAX_CONTENT else text[: MAX_CONTENT - 1] + "…"


def text_message(role: str, text: str, finish_reason: str | None = None) -> dict[str, Any]:
    """A GenAI message with one text part."""
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text}]}
    if finish_reason is not None:
        message["finish_reason"] = finish_reason
    return message


def tool_calls_message(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant's tool calls (`actions.requested` entries) as a GenAI message."""
    parts = [
        {
            "type": "tool_call",
            "id": c.get("callId"),
            "name": c.get("toolName") or c.get("name"),
            "arguments": c.get("input"),
        }
        for c in calls
    ]
    return {"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}


def tool_result_message(call_id: str, result: str) -> dict[str, Any]:
    """A tool's answer (what the model reads) as a GenAI message."""
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}
