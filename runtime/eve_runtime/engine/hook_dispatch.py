"""Running the hooks of `agent/hooks/**` (`define_hook`) for the events a session emits.

eve's dispatch order for every stream event is: channel handler, metadata projection, hooks,
dynamic resolvers. Here an event's channel handlers (`eve_runtime.engine.channel_events`), the
projection of the channel's state (`eve_runtime.engine.channel_state`) and then its hooks run once the
event is durable; hooks see the projected metadata as `ctx.channel.metadata`:

- **Once, as emitted.** The session's emitter hands every batch it wrote to the dispatcher;
  nothing else does. Events re-read from the store (a stream, a recovery after a crash or a
  restart) never reach a hook again, and events an interrupted attempt wrote are not re-run.
  Recovery's new events are new events and run hooks as usual.
- **In order.** One queue per session: event by event, typed handlers first (hooks in slug
  order), then the `*` handlers. A handler finishes before the next one starts.
- **Off the turn's path.** The turn never waits for a hook, except where eve's order says a
  dynamic resolver comes after the hooks of the same event: before the dynamic instructions and
  model of `session.started` / `turn.started` are resolved, the turn waits for the hooks of the
  events emitted so far (only when the agent has both hooks and such resolvers). A slow hook
  therefore delays later hooks, never the stream.
- **Bounded.** Each handler gets `RuntimeOptions.hook_timeout` seconds (30 by default); one
  that overruns is logged and left behind (a sync handler's thread cannot be stopped).
- **Isolated.** A handler that raises is logged (logger `eve.hooks`, with the hook's slug and
  the event) and the turn goes on. (eve fails the turn instead; observing must not break the
  conversation here.)
- Sync handlers run on the runtime's tool threads, `async` ones on the event loop.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Any

from eve_runtime.authoring.context import lineage
from eve_runtime.authoring.hooks import HookChannel, HookContext, HookHandler, HookSession
from eve_runtime.checkpoint import SessionState
from eve_runtime.engine.channel_events import Binding, ChannelEvent, ChannelEvents, session_channel
from eve_runtime.engine.channel_state import as_json
from eve_runtime.engine.user_calls import call_user
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import EventRow

__all__ = ["HookDispatcher", "Observer", "handlers_for", "hook_context", "observes"]

logger = logging.getLogger("eve.hooks")

Observer = Callable[[Sequence[EventRow]], None]
"""Told about every batch of events the emitter made durable."""


def handlers_for(agent: RuntimeAgent, event_type: str) -> list[tuple[str, str, HookHandler]]:
    """`(slug, key, handler)` to run for an event: typed handlers first, then `*`, each in slug order."""
    hooks = [(slug, agent.hooks[slug].events) for slug in sorted(agent.hooks)]
    typed = [(slug, event_type, events[event_type]) for slug, events in hooks if event_type in events]
    return typed + [(slug, "*", events["*"]) for slug, events in hooks if "*" in events]


def observes(agent: RuntimeAgent, event_types: Sequence[str]) -> bool:
    """Whether any hook of the agent handles one of these event types."""
    return any(name == "*" or name in event_types for hook in agent.hooks.values() for name in hook.events)


def hook_context(session_id: str, agent: RuntimeAgent, state: SessionState) -> HookContext:
    """The context the hooks of a session (running `agent`, in `state`) receive."""
    parent, predecessor = lineage(state)
    return HookContext(
        session=HookSession(id=session_id, parent=parent, predecessor=predecessor),
        agent_name=agent.name,
        node_id=agent.manifest.node_id,
    )


@dataclass
class _Queue:
    items: deque[tuple[RuntimeAgent, HookContext, EventRow]] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)


class HookDispatcher:
    """The runtime's hook runner: one ordered queue per session (see the module docstring)."""

    def __init__(
        self,
        executor: Executor,
        timeout: float,
        channels: ChannelEvents | None = None,
        alias: Callable[[str, str, str], Any] | None = None,
    ) -> None:
        self.executor = executor
        self.timeout = timeout
        self.channels = channels
        """Finds a session's channel, whose event handlers run before the hooks."""
        self.alias = alias
        """`alias(session_id, channel, token)`: what `ChannelEvent.alias` calls."""
        self._queues: dict[str, _Queue] = {}

    def observer(
        self, session_id: str, agent: Callable[[], RuntimeAgent], context: Callable[[], HookContext]
    ) -> Observer:
        """The emitter's observer for a session whose current agent and hook context these give."""

        def observe(rows: Sequence[EventRow]) -> None:
            current = agent()
            channels = self.channels
            if current.hooks or (
                channels is not None and ChannelEvents.observes(current) and channels.may_belong_to_one(session_id)
            ):
                self.publish(session_id, current, context(), rows)

        return observe

    def session_created(self, session_id: str) -> None:
        """A session was created without a channel address (its events skip the channel lookup)."""
        if self.channels is not None:
            self.channels.unbound(session_id)

    def channels_changed(self, session_id: str) -> None:
        """The session gained an address."""
        if self.channels is not None:
            self.channels.forget(session_id)

    def publish(self, session_id: str, agent: RuntimeAgent, context: HookContext, rows: Sequence[EventRow]) -> None:
        """Queue durable events for the session's hooks."""
        queue = self._queues.get(session_id)
        if queue is None:
            queue = self._queues[session_id] = _Queue()
        queue.items.extend((agent, context, row) for row in rows)
        queue.idle.clear()
        if queue.task is None:
            queue.task = asyncio.create_task(self._drain(session_id, queue), name=f"eve-hooks-{session_id}")

    async def settle(self, session_id: str) -> None:
        """Wait until the hooks of every event published for the session so far have run."""
        queue = self._queues.get(session_id)
        if queue is not None and queue.task is not None:
            await queue.idle.wait()

    async def close(self, deadline: float) -> None:
        """Let queued hooks finish for at most `deadline` seconds, then cancel the rest."""
        tasks = [q.task for q in self._queues.values() if q.task is not None]
        if not tasks:
            return
        _done, pending = await asyncio.wait(tasks, timeout=deadline)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)

    def abort(self) -> None:
        """Cancel every queue now (a process that dies runs no more hooks)."""
        for queue in self._queues.values():
            if queue.task is not None:
                queue.task.cancel()
        self._queues.clear()

    async def _drain(self, session_id: str, queue: _Queue) -> None:
        try:
            while queue.items:
                agent, context, row = queue.items.popleft()
                event = json.loads(row.line)
                try:
                    channel = await self._run_channel(session_id, agent, event)
                except Exception:  # a store error: the hooks still run (without the channel), the queue goes on
                    logger.exception(
                        "session %s: the channel step of %s %s failed; its hooks run without ctx.channel",
                        session_id,
                        event.get("type"),
                        event.get("meta", {}).get("id"),
                    )
                    channel = None
                if channel is not None:
                    context = replace(context, channel=channel)
                for slug, key, handler in handlers_for(agent, row.type):
                    await self._run(slug, key, handler, (event, context), event)
        finally:
            queue.task = None
            queue.idle.set()
            if self._queues.get(session_id) is queue and not queue.items:
                del self._queues[session_id]

    async def _run_channel(self, session_id: str, agent: RuntimeAgent, event: dict[str, Any]) -> HookChannel | None:
        """Run the event's channel handlers and project the channel's metadata; what hooks see as `ctx.channel`."""
        channels = self.channels
        found = await session_channel(channels, agent, session_id)
        if channels is None or found is None:
            return found
        name, address = found.kind, found.continuation_token
        handlers = ChannelEvents.handlers(agent, Binding(name, address), str(event.get("type")))
        if not handlers:
            return found
        alias = self.alias

        async def add_alias(token: str) -> None:
            if alias is not None:
                await alias(session_id, name, token)

        definition = agent.channels[name]
        if not definition.stateful:  # nothing to keep or project: the handlers only observe
            view = ChannelEvent(name, session_id, address, event, add_alias)
            for key, handler in handlers:
                await self._run(f"channels/{name}", key, handler, (event.get("data", {}), view), event)
            return found

        async def change(state: Any) -> Any:
            for key, handler in handlers:
                view = ChannelEvent(name, session_id, address, event, add_alias, copy.deepcopy(state))
                if await self._run(f"channels/{name}", key, handler, (event.get("data", {}), view), event):
                    try:
                        state = as_json(view.state)
                    except (TypeError, ValueError):
                        logger.error("channel %s (%s) left a state that is not JSON data; dropped", name, key)
            return state

        snapshot = await channels.states.update(session_id, name, definition, change)
        return replace(found, metadata=snapshot.metadata)

    async def _run(
        self, slug: str, key: str, handler: HookHandler, args: tuple[Any, ...], event: dict[str, Any]
    ) -> bool:
        """Run one handler; whether it finished without raising or overrunning (logged otherwise)."""
        try:
            async with asyncio.timeout(self.timeout):
                await call_user(self.executor, handler, *args)
            return True
        except TimeoutError:
            logger.warning(
                "hook %s (%s) took longer than %.1f s on %s %s; it is no longer waited for",
                slug,
                key,
                self.timeout,
                event.get("type"),
                event.get("meta", {}).get("id"),
            )
        except Exception:
            logger.exception(
                "hook %s (%s) failed on %s %s", slug, key, event.get("type"), event.get("meta", {}).get("id")
            )
        return False
