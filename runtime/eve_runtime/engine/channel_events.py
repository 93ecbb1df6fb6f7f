"""Channel event handlers: a custom channel observes the events of the sessions it started.

A session belongs to the channel of its first address (claimed when the channel's `send`
created it). For every event such a session emits, the channel's handlers for the event's type
run, then its `*` handlers, each as `handler(data, channel)` where `data` is the event's `data`
and `channel` a [`ChannelEvent`]. They run in the hook dispatcher's queue of the session, right
before the app's hooks of the same event (eve's order: channel handler, metadata projection,
hooks, dynamic resolvers), with the same guarantees: once, as emitted, in order, bounded and
isolated (see `eve_runtime.engine.hook_dispatch`). `channel.state` is the session's channel state; what
the handlers leave there is projected through the channel's `metadata(state)` and stored before
the hooks run (see `eve_runtime.engine.channel_state`).

Sessions started by id (the eve HTTP channel) and subagent sessions have no address, so no
custom channel sees them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eve_runtime.authoring.hooks import HookChannel
from eve_runtime.engine.channel_state import ChannelStates
from eve_runtime.store.base import Store

if TYPE_CHECKING:
    from eve_runtime.project.runtime_agent import RuntimeAgent

__all__ = ["Binding", "ChannelEvent", "ChannelEvents", "session_channel"]

_CACHED = 4096


@dataclass(frozen=True)
class Binding:
    """The channel a session belongs to, and the channel-local address it was started at."""

    channel: str
    address: str


@dataclass
class ChannelEvent:
    """The second argument of a channel event handler."""

    channel: str
    """The channel's name."""
    session_id: str
    address: str
    """The channel-local address the session was started at (the token given to `from_`)."""
    event: dict[str, Any]
    """The whole event (`type`, `data`, `meta`)."""
    alias_address: Callable[[str], Any] = field(repr=False, compare=False)
    state: Any = None
    """The session's channel state: change it in place or assign it (JSON data)."""

    @property
    def type(self) -> str:
        """The event's type."""
        return str(self.event.get("type"))

    async def alias(self, token: str) -> None:
        """Add another address of this channel to the session (await it from an `async` handler).

        Raises:
            AddressInUse: Another active session holds the address.
        """
        await self.alias_address(token)


class ChannelEvents:
    """Finds the channel of a session (cached) and its handlers for an event."""

    def __init__(self, store: Store, executor: Executor | None = None, timeout: float = 30.0) -> None:
        self.store = store
        self.states = ChannelStates(store, executor, timeout)
        """The sessions' channel state and metadata."""
        self._bindings: OrderedDict[str, Binding | None] = OrderedDict()

    @staticmethod
    def observes(agent: RuntimeAgent, event_types: Sequence[str] | None = None) -> bool:
        """Whether any channel of the agent handles events (one of `event_types`, when given)."""
        return any(
            name == "*" or event_types is None or name in event_types
            for channel in agent.channels.values()
            for name in channel.events
        )

    def may_belong_to_one(self, session_id: str) -> bool:
        """False once the session is known to belong to no channel (its events then skip the queue)."""
        return session_id not in self._bindings or self._bindings[session_id] is not None

    def unbound(self, session_id: str) -> None:
        """The session was just created without an address: its events need no channel lookup."""
        self._remember(session_id, None)

    def forget(self, session_id: str) -> None:
        """The session gained an address: look its channel up again."""
        self._bindings.pop(session_id, None)

    def _remember(self, session_id: str, binding: Binding | None) -> None:
        self._bindings[session_id] = binding
        while len(self._bindings) > _CACHED:
            self._bindings.popitem(last=False)

    async def binding(self, session_id: str) -> Binding | None:
        """The channel the session belongs to, if any."""
        if session_id in self._bindings:
            self._bindings.move_to_end(session_id)
            return self._bindings[session_id]
        addresses = await self.store.session_addresses(session_id)
        found = None
        if addresses:
            name, _, token = addresses[0].partition(":")
            found = Binding(name, token)
        self._remember(session_id, found)
        return found

    @staticmethod
    def handlers(agent: RuntimeAgent, binding: Binding, event_type: str) -> list[tuple[str, Callable[..., Any]]]:
        """`(key, handler)` of the session's channel for an event: typed first, then `*`."""
        channel = agent.channels.get(binding.channel)
        if channel is None:
            return []
        found = [(event_type, channel.events[event_type])] if event_type in channel.events else []
        if "*" in channel.events:
            found.append(("*", channel.events["*"]))
        return found


async def session_channel(channels: ChannelEvents | None, agent: RuntimeAgent, session_id: str) -> HookChannel | None:
    """What `ctx.channel` holds for a session: its channel, address and current metadata (None: no channel)."""
    if channels is None or not agent.channels:
        return None
    binding = await channels.binding(session_id)
    if binding is None:
        return None
    definition = agent.channels.get(binding.channel)
    if definition is None or not definition.stateful:
        return HookChannel(binding.channel, binding.address)
    snapshot = await channels.states.current(session_id)
    return HookChannel(binding.channel, binding.address, snapshot.metadata if snapshot is not None else None)
