"""Ownership of sessions when many processes share one store (the Postgres world).

A session is executed only by the process holding its lease. An actor acquires the lease before
it loads anything (a process that cannot, because another one runs the session, ends its actor:
the owner hears of the delivery through the store's notification), renews it every third of its
time to live while it works, writes every commit with the lease's fencing token (a commit of a
superseded owner is refused by the store), and releases it when its work is done. After the
release it looks once more for deliveries accepted elsewhere meanwhile, so none is stranded
between a refused acquisition and a release.

A process that dies holding leases leaves them to expire: every process looks for such orphaned
sessions every half lease and takes them over (acquiring bumps the fencing token; the new
owner's actor recovers the interrupted turn as after any crash).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from eve_runtime.store.base import Store, StoreError

if TYPE_CHECKING:
    from eve_runtime.actor import SessionActor
    from eve_runtime.runtime import Runtime

__all__ = ["Ownership"]

logger = logging.getLogger("eve.ownership")


class Ownership:
    """The leases of one process (one owner id) over the sessions it runs.

    Args:
        store: The shared store.
        ttl: Seconds a lease lasts without renewal (how long a dead owner's sessions wait).
    """

    def __init__(self, store: Store, ttl: float) -> None:
        self.store = store
        self.ttl = ttl
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """This process's owner id (host and pid, for people reading the owners table)."""
        self._watcher: asyncio.Task[None] | None = None
        self._refreshing: set[asyncio.Future[None]] = set()

    async def run(self, actor: SessionActor, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` for `actor` while holding the session's lease; return at once when another owner runs it."""
        session_id = actor.session_id
        fence = await self.store.acquire(session_id, self.owner, self.ttl)
        if fence is None:
            actor.closing = True  # the owner runs the session; it is told of deliveries by the store
            logger.debug("session %s runs in another process", session_id)
            return
        actor.emitter.fence = fence
        lost = asyncio.Event()
        renewal = asyncio.create_task(self._renew(actor, fence, lost), name=f"eve-lease-{session_id}")
        try:
            await work()
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
            if not lost.is_set():
                try:
                    await self.store.release(session_id, self.owner)
                except StoreError as exc:
                    logger.warning("session %s: cannot release its lease (%s); it expires by itself", session_id, exc)
        if not lost.is_set() and not actor.stopping and actor.session.status == "active":
            await self.look_again(actor)

    async def _renew(self, actor: SessionActor, fence: int, lost: asyncio.Event) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                renewed = await self.store.acquire(actor.session_id, self.owner, self.ttl)
            except StoreError as exc:
                logger.warning("session %s: cannot renew its lease yet (%s)", actor.session_id, exc)
                continue
            if renewed != fence:
                lost.set()
                logger.warning(
                    "session %s: another process took over its lease (fencing token %s, this one held %s): "
                    "stopping it here",
                    actor.session_id,
                    renewed,
                    fence,
                )
                actor.stopping = True
                if actor.task is not None:
                    actor.task.cancel()
                return

    def start(self, runtime: Runtime) -> None:
        """Hear of other processes' deliveries, and look for orphaned sessions every half lease (with jitter)."""
        self.store.on_delivery(lambda session_id: self._delivered_elsewhere(runtime, session_id))

        async def watch() -> None:
            while True:
                await asyncio.sleep(self.ttl / 2 * random.uniform(0.8, 1.2))
                try:
                    orphans = await self.store.orphaned_sessions()
                except StoreError as exc:
                    logger.warning("cannot look for orphaned sessions yet (%s)", exc)
                    continue
                for session_id in orphans:
                    if runtime.actor(session_id) is None:
                        logger.info("session %s: its owner's lease expired; taking it over", session_id)
                        await self._wake(runtime, session_id)

        self._watcher = asyncio.create_task(watch(), name="eve-orphans")

    def _delivered_elsewhere(self, runtime: Runtime, session_id: str) -> None:
        """Another process accepted a delivery: an actor of this process may be the one to handle it."""
        if runtime.actor(session_id) is None:
            return  # the accepting process acquires the session, or its owner's actor takes the delivery
        task = asyncio.ensure_future(self._refresh(runtime, session_id))
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _refresh(self, runtime: Runtime, session_id: str) -> None:
        try:
            pending = await self.store.pending_deliveries(session_id)
        except StoreError as exc:
            logger.warning("session %s: cannot read its inbox (%s)", session_id, exc)
            return
        actor = runtime.actor(session_id)
        if actor is not None and actor.accepts_deliveries():
            for delivery in pending:
                actor.push(delivery)
        elif pending:
            await self._wake(runtime, session_id)

    async def look_again(self, actor: SessionActor) -> None:
        """After a release: wake the session when a delivery arrived that its actor never saw."""
        try:
            pending = await self.store.pending_deliveries(actor.session_id)
        except StoreError:
            return  # whoever accepted it acquires the session, or the orphan watch does
        if any(not actor.seen(delivery.id) for delivery in pending):
            await self._wake(actor.runtime, actor.session_id)

    @staticmethod
    async def _wake(runtime: Runtime, session_id: str) -> None:
        try:
            session = await runtime.store.get_session(session_id)
        except StoreError:
            return
        if session is not None and session.status == "active":
            runtime.look_after(session)

    async def stop(self) -> None:
        """Stop looking for orphaned sessions and reading inboxes."""
        watcher, self._watcher = self._watcher, None
        for task in [*self._refreshing, *([watcher] if watcher is not None else [])]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
