"""Calling user-defined resolvers (`define_dynamic`) for instructions and the model at run time."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.authoring.context import ParentInfo, Predecessor, SessionInfo, lineage
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.hooks import HookChannel
from eve_runtime.authoring.instructions import Instructions
from eve_runtime.checkpoint import DynamicValue, TurnState
from eve_runtime.engine.channel_events import ChannelEvents, session_channel
from eve_runtime.engine.hook_dispatch import observes
from eve_runtime.engine.ports import Session
from eve_runtime.project.runtime_agent import RuntimeAgent

__all__ = [
    "DynamicContext",
    "ResolverError",
    "call_resolver",
    "dynamic_context",
    "resolve_instructions",
    "resolve_model_id",
    "settle_before_resolvers",
]


class ResolverError(Exception):
    """A resolver raised or returned something unusable; the message says which and why."""


@dataclass(frozen=True)
class DynamicContext:
    """What a dynamic resolver's handler receives.

    Besides the session's coordinates it offers `ctx.session` (like a tool's, with the
    `predecessor` of a replacement session), `ctx.channel` (for a session a custom channel
    started: its name, address and freshly projected `metadata`) and `await ctx.memo(key, fn)`.
    """

    session_id: str
    agent_name: str
    event: str
    """`session.started`, `turn.started` or `step.started`."""
    turn_id: str | None = None
    sequence: int | None = None
    step_index: int | None = None
    principal_id: str = "local-dev"
    parent: ParentInfo | None = None
    predecessor: Predecessor | None = None
    memo_values: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The session's memo (saved with its checkpoint); use `memo()`."""
    channel: HookChannel | None = None
    """The custom channel that started the session, with its metadata (None for sessions started by id)."""

    @property
    def session(self) -> SessionInfo:
        """The session: id, turn, person, parent (a subagent's) and predecessor (a replacement's)."""
        return SessionInfo(
            self.session_id,
            self.turn_id or "",
            self.sequence if self.sequence is not None else 0,
            self.principal_id,
            self.parent,
            self.predecessor,
        )

    async def memo(self, key: str, fn: Callable[[], Any]) -> Any:
        """`fn()` (sync or async), computed once per key per session and saved with the session.

        The result must be JSON data (None included: a None result is remembered too). It is
        saved with the checkpoint that follows, so it survives restarts; after a crash before
        that checkpoint, `fn` runs again. A `fn` that raises fails the turn and is tried again
        next time.

        Example:
            ```python
            content = await ctx.memo(f"brief:{ctx.session.id}", load_brief)
            ```
        """
        if not isinstance(key, str):
            raise TypeError("ctx.memo: key must be a string")
        if key in self.memo_values:
            return self.memo_values[key]
        value = fn()
        if inspect.isawaitable(value):
            value = await value
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"ctx.memo({key!r}): the result must be JSON data ({exc})") from exc
        self.memo_values[key] = value
        return value


async def dynamic_context(session: Session, event: str, turn: TurnState) -> DynamicContext:
    """The context of a session's resolvers for `event` of `turn` (`ctx.channel` read as of now)."""
    state = session.state
    parent, predecessor = lineage(state)
    return DynamicContext(
        session_id=session.session_id,
        agent_name=session.agent.name,
        event=event,
        turn_id=turn.turn_id,
        sequence=turn.sequence,
        principal_id=turn.principal_id or session.host.principal_id,
        parent=parent,
        predecessor=predecessor,
        memo_values=state.memo,
        channel=await session_channel(session.host.hooks.channels, session.agent, session.session_id),
    )


async def call_resolver(resolver: DynamicResolver, event: str, context: DynamicContext) -> Any:
    """Run a resolver's handler for `event` (sync or async); what it raises becomes a `ResolverError`."""
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
        value = await call_resolver(resolver, event, context)
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
    value = await call_resolver(resolver, event, context)
    if isinstance(value, dict):
        value = value.get("model")
    if not isinstance(value, str) or not value:
        raise ResolverError(f"The dynamic model resolver returned {value!r} on {event}; return a model id string.")
    return value


def _resolves_on(agent: RuntimeAgent, event_types: Sequence[str]) -> bool:
    resolvers = [*agent.dynamic_instructions, *agent.dynamic_tools.values(), *agent.dynamic_skills.values()]
    if isinstance(agent.config.model, DynamicResolver):
        resolvers.append(agent.config.model)
    return any(name in event_types for resolver in resolvers for name in resolver.events)


async def settle_before_resolvers(session: Session, event_types: Sequence[str]) -> None:
    """Let the channel handlers and hooks of the events emitted so far run before the resolvers of `event_types` do.

    Only when the agent has both (otherwise nothing waits, and nothing is written early).
    """
    agent = session.agent
    handled = (agent.hooks and observes(agent, event_types)) or ChannelEvents.observes(agent, event_types)
    if handled and _resolves_on(agent, event_types):
        await session.flush()
        await session.host.hooks.settle(session.session_id)
