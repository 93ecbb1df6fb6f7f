"""Accepting a delivery: durably into the session's inbox, then to the actor that runs it.

Where the store tells the result before it is durable (`Store.enqueue_early`, the SQLite store),
the delivery goes to the actor at once, and the turn it starts runs while the delivery commits
(the actor writes nothing before it is durable, see `Actors.hand_over_early`): an idle session's
turn then does not wait out the commit of its message first. `accept` still returns only once the
delivery is durable. Where it tells the session's pending list with the result (`EnqueueResult.pending`,
Postgres), the actor it starts takes that list instead of reading it again (`Actors.hand_over`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from eve_runtime.engine.held import LoadedSession
from eve_runtime.ids import new_delivery_id
from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.sessions.actors import Actors
from eve_runtime.sessions.availability import Availability, SessionStranded, is_descendant, retire_safely
from eve_runtime.store.base import DeliveryKind, EnqueueResult, NewDelivery, SessionNotActive, SessionRecord, Store

__all__ = ["Accepting", "accept"]


class Accepting(Protocol):
    """What accepting a delivery needs of the runtime."""

    @property
    def store(self) -> Store: ...
    @property
    def actors(self) -> Actors: ...
    @property
    def availability(self) -> Availability: ...
    @property
    def retiring(self) -> KeyedLocks: ...
    def runs_here(self, session: SessionRecord) -> bool: ...
    def wake(self, session: SessionRecord) -> None: ...


async def accept(
    runtime: Accepting, session_id: str, kind: DeliveryKind, payload: dict[str, Any], idempotency_key: str | None
) -> EnqueueResult:
    """See `Runtime.accept`."""
    actors, store = runtime.actors, runtime.store
    actor = actors.get(session_id)
    session: SessionRecord | None = None
    if actor is None:  # a running actor means the session runs here; else look at its record once
        session = actors.loaded_record(session_id) or await store.get_session(session_id)
        refusal = runtime.availability.refusal(session) if session is not None else None
        if isinstance(refusal, SessionStranded) and session is not None and is_descendant(session):
            await retire_safely(store, runtime.retiring, session_id)  # a stranded child: cancelled, never run
            raise SessionNotActive(session_id)
        if refusal is not None:
            raise refusal
    since = None if actor is not None else actors.loaded(session_id)  # an actor ran meanwhile if it changes
    handed = False

    def hand_over(early: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        nonlocal handed
        if early.duplicate:
            return
        record = session or actors.loaded_record(session_id)  # the actor seen above may have ended since
        runs = record is not None and record.status == "active" and runtime.runs_here(record)
        handed = actors.hand_over_early(record if runs else None, early.delivery, durable)

    delivery = NewDelivery(id=new_delivery_id(), kind=kind, payload=payload, idempotency_key=idempotency_key)
    result = await store.enqueue_early(session_id, delivery, hand_over)
    if handed:
        return result
    # A repeated key whose delivery is still waiting is handed over again (the inbox takes a delivery
    # once): the first try may have been stored and answered 503 (a lost connection), so nobody woke.
    if not result.duplicate or not result.delivery.consumed:
        actor = actors.get(session_id)
        if actor is not None and actor.accepts_deliveries():
            actor.push(result.delivery)
        else:
            if session is None:
                session = actors.loaded_record(session_id) or await store.get_session(session_id)
            if session is not None and session.status == "active" and not _hand_over(runtime, session, result, since):
                runtime.wake(session)
    return result


def _hand_over(runtime: Accepting, session: SessionRecord, result: EnqueueResult, since: LoadedSession | None) -> bool:
    """Start the session's actor with the pending list the enqueue read, when it may skip reading it."""
    if since is None or result.pending is None or runtime.actors.get(session.id) is not None:
        return False
    return runtime.runs_here(session) and runtime.actors.hand_over(session, result.pending, since)
