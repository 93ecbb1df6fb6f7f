"""The SQLite writer's early results: what is written meanwhile joins the delivery's transaction, or follows it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.store import Commit, EnqueueResult, SqliteStore, StoreError, StoreUnavailable
from tests.store.conftest import delivery, events, patient, session

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = SqliteStore(tmp_path)
    await store.open()
    await store.create_session(session("s1"))
    await store.create_session(session("s2"))
    try:
        yield store
    finally:
        await store.close()


def submit_raw(store: SqliteStore, fn: object) -> asyncio.Future[object]:
    assert store._writer is not None
    return asyncio.ensure_future(store._writer.submit(fn))  # type: ignore[arg-type]


async def test_a_write_made_on_the_early_result_shares_its_transaction(store: SqliteStore) -> None:
    patient(store)
    writes: list[asyncio.Future[None]] = []

    def early(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        assert store.orders_after("s1")  # the session's writes now follow the delivery
        writes.append(asyncio.ensure_future(store.commit("s1", Commit(events=events(0, b"its turn")))))

    before = store.stats.transactions
    result = await store.enqueue_early("s1", delivery("d1"), early)
    await asyncio.gather(*writes)
    assert store.stats.transactions - before == 1  # one fsync for the message and its turn's write
    assert result.delivery.id == "d1" and not store.orders_after("s1")
    assert [e.line for e in await store.read_events("s1")] == [b"its turn"]
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]


async def test_another_sessions_write_joins_and_a_failing_one_fails_alone(store: SqliteStore) -> None:
    patient(store)
    joined: list[asyncio.Future[object]] = []

    def refuse(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO deliveries (id) VALUES ('broken')")  # violates NOT NULL: raises

    def early(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        joined.append(asyncio.ensure_future(store.commit("s2", Commit(events=events(0, b"other")))))
        joined.append(submit_raw(store, refuse))
        joined.append(asyncio.ensure_future(store.commit("s1", Commit(events=events(0, b"mine")))))

    before = store.stats.transactions
    await store.enqueue_early("s1", delivery("d1"), early)
    outcomes = await asyncio.gather(*joined, return_exceptions=True)
    assert outcomes[0] is None and isinstance(outcomes[1], StoreError) and outcomes[2] is None
    assert store.stats.transactions - before == 1
    assert [e.line for e in await store.read_events("s2")] == [b"other"]
    assert [e.line for e in await store.read_events("s1")] == [b"mine"]


async def test_when_the_transaction_is_lost_nothing_of_the_delivery_or_what_follows_is_stored(
    store: SqliteStore,
) -> None:
    patient(store)

    def abort(conn: sqlite3.Connection) -> None:
        conn.execute("ROLLBACK")  # as SQLite does on an I/O error or a full disk
        raise sqlite3.OperationalError("disk I/O error (simulated)")

    told: list[asyncio.Future[EnqueueResult]] = []
    later: list[asyncio.Future[object]] = []

    def early(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        told.append(durable)
        later.append(submit_raw(store, abort))

    with pytest.raises(StoreError, match="simulated"):
        await store.enqueue_early("s1", delivery("d1"), early)
    assert told and isinstance(told[0].exception(), StoreError)
    with pytest.raises(StoreError):
        await later[0]
    assert await store.pending_deliveries("s1") == []


@pytest.mark.parametrize("full", [False, True], ids=["io-error", "disk-full"])
async def test_a_write_that_follows_a_failed_delivery_is_refused(store: SqliteStore, full: bool) -> None:
    """A write queued behind a delivery told early, in a later transaction, is applied only if the delivery was.

    It is refused as the delivery failed: behind a full disk, as unavailable (`GET /eve/v1/health` stays degraded).
    """
    patient(store)

    def abort(conn: sqlite3.Connection) -> None:
        conn.execute("ROLLBACK")
        error = sqlite3.OperationalError("disk I/O error (simulated)")
        if full:
            error.sqlite_errorcode = sqlite3.SQLITE_FULL
        raise error

    follow: list[asyncio.Future[object]] = []

    def early(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        follow.append(submit_raw(store, abort))  # joins, and loses the transaction: the write below comes after it
        follow.append(asyncio.ensure_future(store.commit("s1", Commit(events=events(0, b"about a lost message")))))

    with pytest.raises(StoreError):
        await store.enqueue_early("s1", delivery("d1"), early)
    with pytest.raises(StoreError, match="simulated"):
        await follow[0]
    with pytest.raises(StoreUnavailable if full else StoreError, match="could not be stored"):
        await follow[1]
    assert (await store.health() is not None) == full
    assert await store.event_count("s1") == 0
    if full:
        return
    await store.commit("s1", Commit(events=events(0, b"later")))  # the session itself writes on
    assert [e.line for e in await store.read_events("s1")] == [b"later"]


async def test_with_nothing_to_join_the_delivery_commits_alone(store: SqliteStore) -> None:
    told: list[bool] = []
    before = store.stats.transactions
    await store.enqueue_early("s1", delivery("d1"), lambda result, durable: told.append(durable.done()))
    assert told == [False] and not store.orders_after("s1")
    assert store.stats.transactions - before == 1
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]
