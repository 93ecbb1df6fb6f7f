"""Channel state and metadata: what a custom channel remembers per session, and what it shows.

A channel declares `state=` (its initial per-session state) and `metadata=` (a projection
`metadata(state)`), see `eve_runtime.channels`. For every session the channel started:

- **Seeded at creation.** The session starts from the channel's initial state, merged (for
  dicts; replaced otherwise) with the `state=` of the `send` that created it, and its first
  projection. Both are written in the transaction that creates the session and claims its
  address, so a session never exists without its seeded state.
- **Changed by the channel's own code.** Its event handlers (`channel.state`) and its
  `deliver(payload, channel)` hook (once per `send`/`respond`). Each change runs under the
  session's lock, so a handler and a route's delivery never overwrite each other's changes.
  Each handler works on a copy: one that raises, overruns its time or leaves a non-JSON
  state is logged and its changes are dropped; the other handlers' changes stand.
- **Projected after each change.** After the channel's handlers of an event, the framework
  re-evaluates `metadata(state)` and stores state and metadata together (when they changed).
  Hooks of the same event, and later the dynamic resolvers, read `ctx.channel.metadata`: the
  dispatch order is channel handler, metadata projection, hooks, dynamic resolvers. A
  projection that raises or returns non-JSON is logged and the previous metadata stays.

**Where it lives.** In the store, one row per session beside the checkpoint, not in the
checkpoint: channel handlers run off the turn's path once their event is durable, after the
step that emitted it may have checkpointed already, and only the session's actor writes its
checkpoint. The row is replaced in one transaction per change, so state and metadata are always
consistent with each other and with the events whose handlers ran: a handler runs once, as
emitted (never again after a restart), and a crash between a handler and its write loses that
handler's change, like any hook effect. A clear, a compaction or a deployment handoff keep it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from eve_runtime.authoring.channels import Channel
from eve_runtime.engine.user_calls import call_user
from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.store.base import Store, StoreError

__all__ = [
    "ChannelDelivery",
    "ChannelSnapshot",
    "ChannelStates",
    "as_json",
    "initial_state",
    "project",
    "run_deliver",
    "seed",
]

logger = logging.getLogger("eve.channels")

_CACHED = 4096


def as_json(value: Any) -> Any:
    """A copy of `value` as JSON data.

    Raises:
        TypeError, ValueError: The value is not JSON data.
    """
    return json.loads(json.dumps(value, allow_nan=False))


@dataclass(frozen=True)
class ChannelSnapshot:
    """A session's channel state and the metadata projected from it."""

    state: Any
    metadata: Any = None

    def encode(self) -> str:
        """The JSON the store keeps."""
        return json.dumps({"state": self.state, "metadata": self.metadata}, sort_keys=True, allow_nan=False)

    @staticmethod
    def decode(text: str) -> ChannelSnapshot:
        """The snapshot `encode` wrote."""
        value = json.loads(text)
        return ChannelSnapshot(value.get("state"), value.get("metadata"))


@dataclass
class ChannelDelivery:
    """The second argument of a channel's `deliver(payload, channel)` hook."""

    channel: str
    """The channel's name."""
    session_id: str
    address: str
    """The channel-local address the send or respond was made to."""
    state: Any
    """The session's channel state: change it in place or assign it."""


async def project(
    name: str, channel: Channel, state: Any, previous: Any, executor: Executor | None = None, timeout: float = 30.0
) -> Any:
    """`channel.metadata(state)` as JSON; `previous` when it raises, overruns or returns something else (logged).

    A sync `metadata` runs on `executor`'s threads (see `eve_runtime.engine.user_calls`).
    """
    if channel.metadata is None:
        return None
    try:
        async with asyncio.timeout(timeout):
            return as_json(await call_user(executor, channel.metadata, copy.deepcopy(state)))
    except Exception:
        logger.exception("the metadata(state) of channel %s failed; its previous metadata stays", name)
        return previous


async def initial_state(channel: Channel, executor: Executor | None = None, timeout: float = 30.0) -> Any:
    """A fresh copy of the channel's initial state as JSON (a `state()` function runs like `metadata`).

    Raises:
        TypeError, ValueError: It is not JSON data.
        TimeoutError: `state()` overran `timeout`.
    """
    if not callable(channel.state):
        return as_json(channel.state)
    async with asyncio.timeout(timeout):
        return as_json(await call_user(executor, channel.state))


async def seed(
    name: str, channel: Channel, state: Any, executor: Executor | None = None, timeout: float = 30.0
) -> str | None:
    """The encoded snapshot a session that `send(..., state=state)` creates starts with (None: nothing to keep).

    Raises:
        TypeError, ValueError: `state` is not JSON data.
    """
    if not channel.stateful and state is None:
        return None
    value = await initial_state(channel, executor, timeout)
    if state is not None:
        given = as_json(state)
        value = {**value, **given} if isinstance(value, dict) and isinstance(given, dict) else given
    return ChannelSnapshot(value, await project(name, channel, value, None, executor, timeout)).encode()


class ChannelStates:
    """Loads, changes and saves sessions' channel state (cached; one lock per session)."""

    def __init__(self, store: Store, executor: Executor | None = None, timeout: float = 30.0) -> None:
        self.store = store
        self.executor = executor
        """Where the channels' sync `state()`, `metadata` and `deliver` run (the tool threads)."""
        self.timeout = timeout
        """Seconds each of those may take (the hook timeout)."""
        self._cache: OrderedDict[str, ChannelSnapshot | None] = OrderedDict()
        self._locks = KeyedLocks()

    async def load(self, session_id: str) -> ChannelSnapshot | None:
        """The session's snapshot, None when it has none."""
        if session_id in self._cache:
            self._cache.move_to_end(session_id)
            return self._cache[session_id]
        text = await self.store.load_channel_state(session_id)
        snapshot = ChannelSnapshot.decode(text) if text is not None else None
        self._remember(session_id, snapshot)
        return snapshot

    def _remember(self, session_id: str, snapshot: ChannelSnapshot | None) -> None:
        self._cache[session_id] = snapshot
        self._cache.move_to_end(session_id)
        while len(self._cache) > _CACHED:
            self._cache.popitem(last=False)

    async def current(self, session_id: str) -> ChannelSnapshot | None:
        """The session's snapshot once the change in progress (a handler's, a `deliver`'s) is saved."""
        async with self._guard(session_id):
            return await self.load(session_id)

    def _guard(self, session_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self._locks.hold(session_id)

    async def update(
        self, session_id: str, name: str, channel: Channel, change: Callable[[Any], Awaitable[Any]]
    ) -> ChannelSnapshot:
        """Under the session's lock: `state = await change(copy of state)`, project it, save what changed.

        Returns the snapshot in effect afterwards (the previous one when saving failed: logged).
        """
        async with self._guard(session_id):
            current = await self.load(session_id)
            state = current.state if current is not None else await initial_state(channel, self.executor, self.timeout)
            changed = await change(copy.deepcopy(state))
            try:
                changed = as_json(changed)
            except (TypeError, ValueError):
                logger.error("channel %s left a state that is not JSON data; its change is dropped", name)
                changed = state
            previous = current.metadata if current is not None else None
            metadata = await project(name, channel, changed, previous, self.executor, self.timeout)
            snapshot = ChannelSnapshot(changed, metadata)
            if current is not None and snapshot == current:
                return current
            try:
                await self.store.save_channel_state(session_id, snapshot.encode())
            except StoreError:
                logger.exception("the channel state of session %s could not be saved", session_id)
                return current if current is not None else ChannelSnapshot(state)
            self._remember(session_id, snapshot)
            return snapshot


async def run_deliver(
    states: ChannelStates,
    name: str,
    channel: Channel,
    session_id: str,
    address: str,
    payload: dict[str, Any],
) -> None:
    """Run the channel's `deliver(payload, channel)` hook for an accepted delivery (no-op without one).

    Like an event handler it runs under the session's lock, on a copy of the state, for at most
    `states.timeout` seconds (a sync one on the tool threads); one that raises or overruns is
    logged and changes nothing (the delivery stands). The route calls it before yielding to the
    loop, and it holds the session's lock while the hook runs, so the session's next turn (its
    channel handlers and dynamic resolvers) sees what it changed.
    """
    deliver = channel.deliver
    if deliver is None:
        return

    async def change(state: Any) -> Any:
        view = ChannelDelivery(name, session_id, address, copy.deepcopy(state))
        try:
            async with asyncio.timeout(states.timeout):
                await call_user(states.executor, deliver, payload, view)
            return as_json(view.state)
        except Exception:
            logger.exception("the deliver hook of channel %s failed; the session's channel state is unchanged", name)
            return state

    await states.update(session_id, name, channel, change)
