"""A delivery reaches its actor before it is durable where the store can tell, and nothing is written before it is."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from eve_runtime.store import DeliveryRecord, EnqueueResult, NewDelivery, SqliteStore, StoreError
from eve_runtime.store.base import EarlyDelivery
from eve_runtime.store.memory import MemoryStore
from tests.harness import Harness, last_reply, make_harness, types
from tests.store.conftest import patient

pytestmark = pytest.mark.anyio


class WatchingSqlite(SqliteStore):
    """A SQLite store that notes, when it tells a delivery early, whether the session's actor took it."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.harness: Harness | None = None
        self.seen: list[tuple[bool, bool]] = []
        """Per early delivery: (an actor runs the session now, the delivery was durable)."""

    async def enqueue_early(self, session_id: str, delivery: NewDelivery, early: EarlyDelivery) -> EnqueueResult:
        def told(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
            early(result, durable)
            assert self.harness is not None
            self.seen.append((self.harness.rt.actor(session_id) is not None, durable.done()))

        return await super().enqueue_early(session_id, delivery, told)


class SqliteLosesTheTransaction(SqliteStore):
    """A SQLite store whose next early delivery's transaction is lost after telling (an I/O error)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.fail_next = False
        self.aborts: list[asyncio.Future[object]] = []

    async def enqueue_early(self, session_id: str, delivery: NewDelivery, early: EarlyDelivery) -> EnqueueResult:
        if not self.fail_next:
            return await super().enqueue_early(session_id, delivery, early)
        self.fail_next = False

        def abort(conn: sqlite3.Connection) -> None:
            conn.execute("ROLLBACK")
            raise sqlite3.OperationalError("disk I/O error (simulated)")

        def told(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
            early(result, durable)  # the actor has it, and its turn writes on: in order after the delivery
            assert self._writer is not None
            self.aborts.append(asyncio.ensure_future(self._writer.submit(abort)))

        patient(self)  # the abort must join the told delivery's transaction, also on a loaded machine
        return await super().enqueue_early(session_id, delivery, told)


class CommitFailsAfterTelling(MemoryStore):
    """A store that tells a delivery early and then fails to make it durable (a full disk at COMMIT)."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_next = False

    async def enqueue_early(self, session_id: str, delivery: NewDelivery, early: EarlyDelivery) -> EnqueueResult:
        if not self.fail_next:
            return await super().enqueue_early(session_id, delivery, early)
        self.fail_next = False
        seq = len(await self.pending_deliveries(session_id)) + 100  # later than anything stored
        record = DeliveryRecord(delivery.id, session_id, seq, delivery.kind, delivery.payload, None, time.time())
        durable: asyncio.Future[EnqueueResult] = asyncio.get_running_loop().create_future()
        early(EnqueueResult(record, duplicate=False), durable)
        await asyncio.sleep(0.05)  # the actor runs meanwhile, as it would during the commit
        durable.set_exception(StoreError("the store's disk is full"))
        raise StoreError("the store's disk is full")


@pytest.mark.parametrize("harness_store", ["memory"], indirect=True)
async def test_an_idle_session_starts_its_turn_while_the_message_commits(tmp_path: Path) -> None:
    store = WatchingSqlite(tmp_path / "workflow-data")
    await store.open()
    h = await make_harness(tmp_path, store=store)
    store.harness = h
    assert store._writer is not None
    store._writer.join_limit = 10.0  # however slow the machine, the turn's first write comes sooner
    try:
        sid = await h.create()
        joined = []
        for index in range(3):
            before = store.stats.jobs - store.stats.transactions
            await h.send(sid, f"message {index}")
            events = await h.turns(sid, index + 1)
            joined.append(store.stats.jobs - store.stats.transactions - before)
            assert last_reply(events) == f"echo: message {index}"
    finally:
        await h.stop()
        await store.close()
    # Each delivery told early (a job alone in its transaction: under load one may share a group
    # commit, and is then handed over once durable) was with an actor before it was durable.
    assert store.seen and all(seen == (True, False) for seen in store.seen)
    # The turn's first write did not wait for its message: it joined the message's transaction.
    assert joined == [1, 1, 1]


@pytest.mark.parametrize("harness_store", ["memory"], indirect=True)
@pytest.mark.parametrize("kind", ["waits-for-it", "sqlite-ordered"])
async def test_a_delivery_that_fails_to_commit_leaves_nothing_of_its_turn(tmp_path: Path, kind: str) -> None:
    """The actor either waits for its message (a store that does not order) or writes behind it (SQLite)."""
    store: CommitFailsAfterTelling | SqliteLosesTheTransaction = (
        CommitFailsAfterTelling() if kind == "waits-for-it" else SqliteLosesTheTransaction(tmp_path / "workflow-data")
    )
    await store.open()
    h = await make_harness(tmp_path, store=store)
    try:
        sid = await h.create()
        await h.send(sid, "first")
        first = await h.turns(sid, 1)
        count = await store.event_count(sid)
        store.fail_next = True
        with pytest.raises(StoreError):
            await h.rt.deliver(sid, "message", {"message": "lost"})
        if isinstance(store, SqliteLosesTheTransaction):  # the job that lost the transaction failed too
            assert len(store.aborts) == 1
            with pytest.raises(StoreError, match="simulated"):
                await store.aborts[0]
        await asyncio.sleep(0.2)
        assert await store.event_count(sid) == count  # the turn the actor started left nothing
        assert await store.pending_deliveries(sid) == []
        await h.send(sid, "second")
        events = await h.turns(sid, 2, timeout=10)
    finally:
        await h.stop()
        await store.close()
    assert "echo: lost" not in str(events)
    assert last_reply(events) == "echo: second"
    assert types(events)[: len(first)] == types(first)
