"""Ownership of sessions when many processes share one store (the Postgres world).

A session is executed only by the process holding its lease. An actor acquires the lease before
it loads anything (a process that cannot, because another one runs the session, ends its actor:
the owner hears of the delivery through the store's notification), renews it every third of its
time to live while it works, and writes every commit with the lease's fencing token (a commit of
a superseded owner is refused by the store).

When an actor's work is done the process keeps the lease a moment longer (`grace`, at most one
second): a conversation's next message, the common case, then needs no lease write at all, and a
delivery another process accepts meanwhile wakes an actor here. Then the lease is released, and
the inbox read once more, so a delivery accepted elsewhere while the lease was held (whose
process could not acquire the session) is never stranded. An actor that handled no delivery (a
starting process's recovery found the session idle, a timer found nothing due) lets the lease go
at once, the same way: a process starting beside busy ones would otherwise hold their sessions for
that moment, and their next messages would run here, each a hop between the processes.

A process whose actor could not acquire a session (another one held it) looks at its inbox again
a lease's time later, so a delivery it accepted is run even when that owner stopped meanwhile.

A process that dies holding leases leaves them to expire: every process looks for such orphaned
sessions every half lease and takes them over (acquiring bumps the fencing token; the new
owner's actor recovers the interrupted turn as after any crash). A process starting on the machine
where the dead one ran (a restart after a crash, the common case) need not wait out those leases:
an owner id names its host, kernel boot and pid namespace and its pid, so at start, before any of
its actors asks for a lease, a process ends the leases of the owners of its own machine whose pid
no longer runs (`end_dead_siblings`): its actors then take those sessions over at once. (Ended
after the actors started, as before, every actor found its lease held and ended, and the sessions
were woken again one store read at a time behind the resumed ones' writes: 17-24 s for 200.)

A session's timeout is scheduled in memory by the processes that saw it (`SessionTimeouts`).
So that it still fires when all of those are gone, every process also asks the store every few
seconds (`RuntimeOptions.deadline_sweep_seconds`) for active sessions past their deadline that no
live owner holds, and wakes them: its actor acquires the lease and completes the expired session
as usual. A task's or a wait's deadline lives in the session's checkpoint, not in a column the
store can query: such a deadline of a session nobody holds fires at the next start of a process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import os
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.store.base import DeliveryRecord, SessionRecord, Store, StoreError

__all__ = ["LeasedActor", "OwnerHost", "Ownership", "is_dead_sibling", "new_owner_id"]

logger = logging.getLogger("eve.ownership")

_DEADLINE_BATCH = 100
"""Sessions past their deadline woken per sweep at most (the rest wait for the next sweep)."""
_REFIRE_SECONDS = 60.0
"""A session woken for its deadline that is still active and unheld is woken again after this long."""


@functools.cache
def _machine() -> str:
    """This kernel boot and pid namespace (a hash), or "" where /proc does not say."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return hashlib.sha256(f"{boot}|{namespace}".encode()).hexdigest()[:12]


def new_owner_id() -> str:
    """An owner id: host, pid, a random part, and the machine (`_machine`), for `is_dead_sibling`."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}:{_machine()}"


def is_dead_sibling(owner: str) -> bool:
    """Whether `owner` was a process of this machine (host, boot, pid namespace) that no longer runs.

    False whenever that cannot be known for sure (another machine, an id of an older format, a pid
    this process may not signal): such leases expire by themselves.
    """
    parts = owner.rsplit(":", 3)
    if len(parts) != 4 or not _machine() or parts[3] != _machine() or parts[0] != socket.gethostname():
        return False
    try:
        pid = int(parts[1])
        if pid == os.getpid():
            return False
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (ValueError, OSError):
        return False
    return False


class LeasedActor(Protocol):
    """A session actor, as the leases of many processes see it."""

    @property
    def session_id(self) -> str: ...

    @property
    def session(self) -> SessionRecord: ...

    @property
    def stopping(self) -> bool: ...

    def push(self, delivery: DeliveryRecord) -> None: ...

    def accepts_deliveries(self) -> bool: ...

    def seen_deliveries(self) -> frozenset[str]: ...

    def stop_accepting(self) -> None: ...

    def hold_lease(self, fence: int, *, kept: bool = False) -> None: ...

    def lose_lease(self) -> None: ...


class OwnerHost(Protocol):
    """The runtime, as the leases of many processes use it."""

    @property
    def store(self) -> Store: ...

    @property
    def options(self) -> RuntimeOptions: ...

    def actor(self, session_id: str) -> LeasedActor | None:
        """The session's actor in this process, if it has one."""
        ...

    def look_after(self, session: SessionRecord) -> None: ...


@dataclass
class _Lease:
    fence: int
    renewed_at: float
    """`time.monotonic()` of the last acquisition or renewal."""
    seen: frozenset[str] = frozenset()
    """The deliveries the last actor took (a release wakes the session only for others)."""
    release: asyncio.TimerHandle | None = field(default=None, repr=False)
    """Set while no actor runs: the release to come."""


class Ownership:
    """The leases of one process (one owner id) over the sessions it runs.

    Args:
        runtime: The runtime whose actors hold the leases.
        ttl: Seconds a lease lasts without renewal (how long a dead owner's sessions wait).
    """

    def __init__(self, runtime: OwnerHost, ttl: float) -> None:
        self.runtime = runtime
        self.store = runtime.store
        self.ttl = ttl
        self.grace = min(1.0, ttl / 4)
        """Seconds a lease is kept after its actor ended, for the session's next delivery."""
        self.owner = new_owner_id()
        """This process's owner id (host and pid first, for people reading the owners table)."""
        self._leases: dict[str, _Lease] = {}
        self._releasing: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self._watchers: list[asyncio.Task[None]] = []
        self._fired_deadlines: dict[str, float] = {}
        """Sessions woken for a deadline nobody fired, with when (`time.monotonic()`)."""

    async def run(self, actor: LeasedActor, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` for `actor` while holding the session's lease; return at once when another owner runs it."""
        session_id = actor.session_id
        releasing = self._releasing.get(session_id)
        if releasing is not None:
            await asyncio.shield(releasing)
        lease = self._leases.get(session_id)
        if lease is not None and lease.release is not None:
            lease.release.cancel()
            lease.release = None
        kept = lease is not None and time.monotonic() - lease.renewed_at <= self.ttl / 3
        if lease is None or not kept:
            fence = await self.store.acquire(session_id, self.owner, self.ttl)
            if fence is None:
                self._leases.pop(session_id, None)
                actor.stop_accepting()  # the owner runs the session; it is told of deliveries by the store
                self._background(self._look_again(session_id))
                return
            lease = self._leases[session_id] = _Lease(fence, time.monotonic())
        actor.hold_lease(lease.fence, kept=kept)
        lost = asyncio.Event()
        renewal = asyncio.create_task(self._renew(actor, lease, lost), name=f"eve-lease-{session_id}")
        try:
            await work()
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
            if lost.is_set() or self._leases.get(session_id) is not lease:
                pass
            elif actor.stopping or actor.session.status != "active":
                del self._leases[session_id]
                await self._release(session_id, lease, wake=False)
            else:
                lease.seen = actor.seen_deliveries()
                if lease.seen:
                    lease.release = asyncio.get_running_loop().call_later(self.grace, self._release_later, session_id)
                else:  # woken with no message (a start's recovery, a timer): no next message to keep it for
                    del self._leases[session_id]
                    await self._release(session_id, lease, wake=True)

    async def _renew(self, actor: LeasedActor, lease: _Lease, lost: asyncio.Event) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                renewed = await self.store.acquire(actor.session_id, self.owner, self.ttl)
            except StoreError as exc:
                logger.warning("session %s: cannot renew its lease yet (%s)", actor.session_id, exc)
                continue
            if renewed == lease.fence:
                lease.renewed_at = time.monotonic()
                continue
            lost.set()
            self._leases.pop(actor.session_id, None)
            if renewed is not None:  # the lease had lapsed and was free again: do not keep what is not ours to run
                with contextlib.suppress(StoreError):
                    await self.store.release(actor.session_id, self.owner)
            logger.warning(
                "session %s: another process took over its lease (fencing token %s, this one held %s): stopping here",
                actor.session_id,
                renewed,
                lease.fence,
            )
            actor.lose_lease()
            return

    def _release_later(self, session_id: str) -> None:
        lease = self._leases.get(session_id)
        if lease is None or lease.release is None or self.runtime.actor(session_id) is not None:
            return
        del self._leases[session_id]
        task = asyncio.ensure_future(self._release(session_id, lease, wake=True))
        self._releasing[session_id] = task
        task.add_done_callback(lambda _task: self._releasing.pop(session_id, None))

    async def _release(self, session_id: str, lease: _Lease, *, wake: bool) -> None:
        """Release the lease; then wake the session for a delivery its last actor never saw."""
        try:
            await self.store.release(session_id, self.owner)
            if wake:
                pending = await self.store.pending_deliveries(session_id)
                if any(delivery.id not in lease.seen for delivery in pending):
                    await self._wake(session_id)
        except StoreError as exc:
            logger.warning("session %s: cannot release its lease (%s); it expires by itself", session_id, exc)

    # -- other processes -------------------------------------------------------------------------

    def start(self) -> None:
        """Hear of other processes' deliveries, and look for sessions no live process looks after.

        Orphaned sessions every half lease; sessions past a deadline nobody fires every
        `RuntimeOptions.deadline_sweep_seconds` (both with jitter).
        """
        self.store.on_delivery(self._delivered_elsewhere)
        sweep = self.runtime.options.deadline_sweep_seconds
        self._watchers = [
            asyncio.create_task(self._every(self.ttl / 2, self._take_over_orphans), name="eve-orphans"),
            asyncio.create_task(self._every(sweep, self._fire_deadlines), name="eve-deadlines"),
        ]

    async def _every(self, seconds: float, sweep: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(seconds * random.uniform(0.8, 1.2))
            try:
                await sweep()
            except StoreError as exc:
                logger.warning("cannot look for sessions to take over yet (%s)", exc)

    async def end_dead_siblings(self) -> None:
        """End the leases of this machine's dead processes (call before the actors start: they take them over)."""
        try:
            for owner in await self.store.lease_owners():
                if is_dead_sibling(owner):
                    logger.info("owner %s no longer runs on this machine; taking its sessions over", owner)
                    await self.store.expire_leases(owner)
        except StoreError as exc:
            logger.warning("cannot look for this machine's dead owners (%s); their leases expire by themselves", exc)

    async def _take_over_orphans(self) -> None:
        orphans = [
            s for s in await self.store.orphaned_sessions() if self.runtime.actor(s) is None and s not in self._leases
        ]
        for session_id in orphans:
            logger.info("session %s: its owner's lease expired; taking it over", session_id)
        await asyncio.gather(*(self._wake(session_id) for session_id in orphans))  # reads in flight together

    async def _fire_deadlines(self) -> None:
        """Wake the sessions past their deadline that no process holds (whoever scheduled it is gone).

        A session woken for its deadline stays active when its actor finds nothing due (parked on a
        person: it times out when that turn ends); it is woken again only after `_REFIRE_SECONDS`.
        """
        fired = self._fired_deadlines
        expired = await self.store.expired_sessions(self.runtime.options.clock(), _DEADLINE_BATCH + len(fired))
        now = time.monotonic()
        self._fired_deadlines = {s: at for s, at in fired.items() if s in expired and now - at < _REFIRE_SECONDS}
        woken = 0
        for session_id in expired:
            if woken >= _DEADLINE_BATCH:
                break
            if session_id in self._fired_deadlines or self.runtime.actor(session_id) is not None:
                continue
            logger.info("session %s: past its deadline and held by no process; waking it", session_id)
            self._fired_deadlines[session_id] = now
            woken += 1
            await self._wake(session_id)

    def _delivered_elsewhere(self, session_id: str) -> None:
        """Another process accepted a delivery: this process handles it if it holds the session."""
        if self.runtime.actor(session_id) is not None:
            self._background(self._refresh(session_id))
        elif session_id in self._leases:
            self._background(self._wake(session_id))  # the new actor reuses the lease held here
        # else: the accepting process acquires the session, or the owner's release wakes it

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refresh(self, session_id: str) -> None:
        try:
            pending = await self.store.pending_deliveries(session_id)
        except StoreError as exc:
            logger.warning("session %s: cannot read its inbox (%s)", session_id, exc)
            return
        actor = self.runtime.actor(session_id)
        if actor is not None and actor.accepts_deliveries():
            for delivery in pending:
                actor.push(delivery)
        elif pending:
            await self._wake(session_id)

    async def _look_again(self, session_id: str) -> None:
        """After a lease's time, take on deliveries still waiting for a session another process held.

        The owner is told of them through the store, but an owner that stops at that moment releases
        the lease without running them: without this second look they would wait for the next start.
        """
        await asyncio.sleep(self.ttl)
        if self.runtime.actor(session_id) is None and session_id not in self._leases:
            await self._refresh(session_id)

    async def _wake(self, session_id: str) -> None:
        try:
            session = await self.store.get_session(session_id)
        except StoreError:
            return
        if session is not None and session.status == "active":
            self.runtime.look_after(session)

    async def stop(self) -> None:
        """Stop listening and watching; release the leases no actor holds (call once actors stopped)."""
        watchers, self._watchers = self._watchers, []
        for task in [*self._tasks, *watchers]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for session_id, lease in list(self._leases.items()):
            if lease.release is not None:
                lease.release.cancel()
                del self._leases[session_id]
                await self._release(session_id, lease, wake=False)
        if self._releasing:
            await asyncio.wait(list(self._releasing.values()), timeout=5)
