"""The Postgres world's turn: the enqueue tells the pending deliveries, so the actor it wakes reads none.

A turn of a session whose lease this process kept costs the store its enqueue and its commits,
no `pending_deliveries` read and no lease; a delivery the store holds that the acceptance did not tell
(another process's, its notification not heard yet) still reaches the actor as soon as anything
asks for one.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.store.base import Commit, DeliveryRecord, EnqueueResult, NewDelivery
from eve_runtime.store.postgres import PostgresStore
from tests import pg
from tests.harness import fast_options, make_harness, of_type

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("harness_store", ["memory"], indirect=True)]
# (the store is Postgres's, whatever `harness_store` says)


class CountingStore(PostgresStore):
    """Records the store calls a turn makes; `gate` holds every commit while it is set."""

    def __init__(self, schema: str) -> None:
        super().__init__(pg.database_url(), schema=schema)
        self.calls: list[str] = []
        self.gate: asyncio.Event | None = None

    async def enqueue(self, session_id: str, delivery: NewDelivery) -> EnqueueResult:
        self.calls.append("enqueue")
        return await super().enqueue(session_id, delivery)

    async def pending_deliveries(self, session_id: str) -> list[DeliveryRecord]:
        self.calls.append("pending_deliveries")
        return await super().pending_deliveries(session_id)

    async def commit(self, session_id: str, commit: Commit) -> None:
        self.calls.append("commit")
        if self.gate is not None:
            await self.gate.wait()
        await super().commit(session_id, commit)

    async def acquire(self, session_id: str, owner: str, ttl: float) -> int | None:
        self.calls.append("acquire")
        return await super().acquire(session_id, owner, ttl)


@pytest.fixture
def schema() -> Iterator[str]:
    with pg.fresh_schema() as name:
        yield name


async def _harness(tmp_path: Path, store: CountingStore) -> Any:
    await store.open()
    return await make_harness(tmp_path, options=fast_options(lease_seconds=15.0), store=store)


async def _actor_ended(h: Any, sid: str) -> None:
    """Wait until the session's actor has ended (its last commit is in)."""
    while h.rt.actor(sid) is not None:
        await asyncio.sleep(0.005)


async def test_a_turn_on_a_kept_lease_reads_no_inbox_and_takes_no_lease(tmp_path: Path, schema: str) -> None:
    store = CountingStore(schema)
    h = await _harness(tmp_path, store)
    try:
        sid = await h.create("hello")
        await h.turns(sid, 1)
        for turn in range(2, 6):
            await _actor_ended(h, sid)  # the last turn's
            store.calls.clear()
            await h.send(sid, f"again {turn}")
            await h.turns(sid, turn)
            await _actor_ended(h, sid)
            assert store.calls.count("enqueue") == 1 and "commit" in store.calls, store.calls
            assert "pending_deliveries" not in store.calls and "acquire" not in store.calls, store.calls
    finally:
        await h.stop()
        await store.close()


async def test_a_delivery_the_enqueue_did_not_tell_reaches_the_actor_it_woke(tmp_path: Path, schema: str) -> None:
    store = CountingStore(schema)
    h = await _harness(tmp_path, store)
    try:
        sid = await h.create("hello")
        await h.turns(sid, 1)
        await _actor_ended(h, sid)
        assert h.rt.ownership is not None
        h.rt.ownership.grace = 60.0  # the lease's release, which reads the inbox too, comes too late to help
        store.gate = asyncio.Event()
        await h.send(sid, "mine")
        actor = h.rt.actor(sid)
        assert actor is not None and actor.inbox.given  # started with the enqueue's list; its turn waits to commit
        # as another process would: accepted in the store, its notification unheard (the tag is this store's)
        other = NewDelivery(id=f"dlv_{uuid.uuid4().hex}", kind="message", payload={"message": "theirs"})
        await store.enqueue(sid, other)
        session = await store.get_session(sid)
        assert session is not None
        h.rt.wake(session)  # what hearing of it does (`Ownership._wake`)
        store.gate.set()
        events = await h.turns(sid, 3)
        assert [e["data"]["message"] for e in of_type(events, "message.received")] == ["hello", "mine", "theirs"]
    finally:
        await h.stop()
        await store.close()
