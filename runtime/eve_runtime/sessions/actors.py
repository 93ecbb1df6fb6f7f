"""The session actors of one process: at most one per session, and only while it has work.

An actor is started for a session that has something to do and ends when its inbox is empty
(see `eve_runtime.engine.actor`). A delivery that reaches an actor on its way out gets a fresh
one once it is gone, and a failed actor is started again a second later. The sessions actors
leave behind stay loaded (the most recent ones), so a conversation's next turn does not read its
history from the store again.

A delivery can reach its actor before it is durable (`hand_over_early`, for a store that tells
the result of an enqueue before its commit, `Store.enqueue_early`): the turn it starts runs while
the delivery commits, and the actor writes nothing before it is durable (`Emitter.after`).

Where the enqueue told the session's whole pending list (`EnqueueResult.pending`, Postgres), a new
actor takes that list (`hand_over`) instead of reading it again, when no actor of the session ran
since the acceptance began. Whatever asks for an actor while such an actor runs (a delivery of
another process heard of meanwhile) makes it read the store's list after all (`ensure`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from eve_runtime.engine.actor import SessionActor
from eve_runtime.engine.held import LoadedSession
from eve_runtime.engine.ports import ActorHost
from eve_runtime.sessions.reader import bind_store
from eve_runtime.store.base import DeliveryRecord, SessionRecord, StoreError

__all__ = ["Actors"]

logger = logging.getLogger("eve.runtime")


class Actors:
    """The actors of one runtime (see the module docstring)."""

    def __init__(self, host: ActorHost, *, cached_sessions: int) -> None:
        self._host = host
        self._cached = cached_sessions
        self._actors: dict[str, SessionActor] = {}
        self._respawn: set[str] = set()
        self._loaded: OrderedDict[str, LoadedSession] = OrderedDict()
        self._stopping = False
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._actors)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._actors

    def get(self, session_id: str) -> SessionActor | None:
        """The session's actor, if it has one (running or ending)."""
        return self._actors.get(session_id)

    def loaded_record(self, session_id: str) -> SessionRecord | None:
        """The record of a session an actor left loaded, if one did."""
        loaded = self._loaded.get(session_id)
        return loaded.session if loaded is not None else None

    def ensure(self, session: SessionRecord) -> None:
        """Make sure an actor will look at the session: a running one does by itself."""
        if self._stopping:
            return
        actor = self._actors.get(session.id)
        if actor is None:
            self._spawn(session)
        elif not actor.accepts_deliveries():
            self._respawn.add(session.id)  # it is ending: start a fresh one when it is gone
        elif actor.inbox.given:
            self._read_inbox(actor)  # it never read the store's: what woke the session may be there

    def loaded(self, session_id: str) -> LoadedSession | None:
        """What the last actor of the session left here (compared by identity: an actor ran since if it changed)."""
        return self._loaded.get(session_id)

    def hand_over(self, session: SessionRecord, pending: Sequence[DeliveryRecord], since: LoadedSession) -> bool:
        """Start the session's actor with the store's pending list an enqueue just read (durable).

        Only while no actor runs and none ran since `since` was what the last one left (it could have
        handled part of `pending`); False when not started: wake the session as usual.
        """
        if self._stopping or session.id in self._actors or self._loaded.get(session.id) is not since:
            return False
        actor = self._spawn(session)
        actor.inbox.take_current(pending)
        return True

    def _read_inbox(self, actor: SessionActor) -> None:
        async def read() -> None:
            try:
                pending = await self._host.store.pending_deliveries(actor.session_id)
            except StoreError as exc:
                logger.warning("session %s: cannot read its inbox (%s)", actor.session_id, exc)
                return
            if self._actors.get(actor.session_id) is actor and actor.accepts_deliveries():
                for delivery in pending:
                    actor.push(delivery)
            elif pending:
                self.ensure(actor.session)

        task = asyncio.ensure_future(read())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def hand_over_early(
        self, session: SessionRecord | None, delivery: DeliveryRecord, durable: asyncio.Future[Any]
    ) -> bool:
        """Hand a delivery to its session's actor before it is durable, starting one if `session` is given.

        False when nobody took it: hand it over once it is durable, as usual. The actor writes
        nothing before `durable` resolved, and fails (to start again from the store) if it fails.
        """
        actor = self._actors.get(delivery.session_id)
        if self._stopping or (actor is None and session is None):
            return False
        if actor is None:
            assert session is not None
            actor = self._spawn(session)
            actor.inbox.take_stored([delivery])  # before it loads: as though it read it from the store
        elif actor.accepts_deliveries():
            actor.push(delivery)
        else:
            return False
        actor.emitter.after(durable)
        return True

    def remember(self, session_id: str, loaded: LoadedSession) -> None:
        """Keep a session an actor just left loaded, for its next turn (the least recent are dropped).

        When many processes share the store, the next actor here uses it only if no other process
        owned the session meanwhile (see `SessionActor.hold_lease`).
        """
        self._loaded[session_id] = loaded
        self._loaded.move_to_end(session_id)
        while len(self._loaded) > self._cached:
            self._loaded.popitem(last=False)

    async def stop(self, deadline: float) -> None:
        """Stop every actor at its next step boundary, waiting at most `deadline` seconds."""
        self._stopping = True
        actors = list(self._actors.values())
        for actor in actors:
            actor.stop()
        tasks = [a.task for a in actors if a.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=deadline)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)

    async def abort(self) -> None:
        """Cancel every actor at once, as a crash would: nothing finishes, nothing is cleaned up."""
        self._stopping = True
        actors = list(self._actors.values())
        tasks = [a.task for a in actors if a.task is not None]
        for task in tasks:
            task.cancel()
        for actor in actors:  # a background write lingering for more would write after the "crash"
            actor.emitter.abort()
        if tasks:
            await asyncio.wait(tasks)
        for actor in actors:  # and one an actor's last moments started
            actor.emitter.abort()

    def _spawn(self, session: SessionRecord) -> SessionActor:
        actor = SessionActor(self._host, session, self._loaded.pop(session.id, None))
        telemetry = self._host.options.telemetry
        if telemetry is not None:  # the session's spans, recorded from its events (`eve_runtime.telemetry`)
            actor.emitter.tap = telemetry.recorder(session.id, lambda: actor.state, lambda: actor.agent.name)
        self._actors[session.id] = actor
        context = contextvars.copy_context()
        context.run(bind_store, self._host.store)  # `sessions` in the session's code reads this runtime's store
        actor.start(context).add_done_callback(lambda task: self._done(actor, task))
        return actor

    def _done(self, actor: SessionActor, task: asyncio.Task[None]) -> None:
        if self._actors.get(actor.session_id) is actor:
            del self._actors[actor.session_id]
        failed = not task.cancelled() and task.exception() is not None
        if failed:
            logger.error("session %s: actor failed", actor.session_id, exc_info=task.exception())
        respawn = actor.session_id in self._respawn
        self._respawn.discard(actor.session_id)
        if self._stopping or actor.session.status != "active":
            return
        if respawn or failed:
            delay = 1.0 if failed else 0.0
            asyncio.get_running_loop().call_later(delay, self._respawn_now, actor.session)

    def _respawn_now(self, session: SessionRecord) -> None:
        if self._stopping:
            return
        actor = self._actors.get(session.id)
        if actor is None:
            self._spawn(session)
        elif actor.inbox.given:  # it started in between from an enqueue's list: the store may hold more
            self.ensure(session)
