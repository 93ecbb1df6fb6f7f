"""Calling user-defined resolvers (`define_dynamic`) for instructions and the model at run time."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from eve_runtime.dynamic import DynamicResolver
from eve_runtime.instructions import Instructions
from eve_runtime.runtime_agent import RuntimeAgent
from eve_runtime.session_state import DynamicValue

__all__ = ["DynamicContext", "ResolverError", "resolve_instructions", "resolve_model_id"]


class ResolverError(Exception):
    """A resolver raised or returned something unusable; the message says which and why."""


@dataclass(frozen=True)
class DynamicContext:
    """What a dynamic resolver's handler receives."""

    session_id: str
    agent_name: str
    event: str
    """`session.started`, `turn.started` or `step.started`."""
    turn_id: str | None = None
    sequence: int | None = None
    step_index: int | None = None


async def _call(resolver: DynamicResolver, event: str, context: DynamicContext) -> Any:
    handler = resolver.events[event]
    try:
        value = handler(context)
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        raise ResolverError(
            f"The {event} handler of a define_dynamic resolver raised {type(exc).__name__}: {exc}"
        ) from exc
    return value


async def resolve_instructions(
    agent: RuntimeAgent, event: str, context: DynamicContext
) -> dict[str, DynamicValue | None]:
    """Run the instruction resolvers listening to `event`; results by resolver slug."""
    values: dict[str, DynamicValue | None] = {}
    for manifest, resolver in zip(agent.manifest.dynamic_instructions, agent.dynamic_instructions, strict=True):
        if event not in resolver.events:
            continue
        value = await _call(resolver, event, context)
        if value is None:
            values[manifest.slug] = None
        elif isinstance(value, Instructions):
            values[manifest.slug] = DynamicValue(content=value.content, role=value.role)
        elif isinstance(value, str):
            values[manifest.slug] = DynamicValue(content=value)
        else:
            raise ResolverError(
                f"The dynamic instructions {manifest.source.logical_path} returned {type(value).__name__}; "
                "return define_instructions(...), a string, or None."
            )
    return values


async def resolve_model_id(resolver: DynamicResolver, event: str, context: DynamicContext) -> str:
    """The model id a dynamic model resolver picks for `event`."""
    value = await _call(resolver, event, context)
    if isinstance(value, dict):
        value = value.get("model")
    if not isinstance(value, str) or not value:
        raise ResolverError(f"The dynamic model resolver returned {value!r} on {event}; return a model id string.")
    return value
