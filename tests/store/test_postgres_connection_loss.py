"""A Postgres connection the server drops (`pg_terminate_backend`): replaced, and the statement run again where safe."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest

from eve_runtime.store import Commit, PostgresStore, StoreUnavailable
from eve_runtime.store.postgres_pool import Connection, Pool, transaction
from tests import pg
from tests.store.conftest import delivery, events, session

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def name() -> str:
    return f"eve-loss-{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def store(schema: str, name: str) -> AsyncIterator[PostgresStore]:
    store = PostgresStore(pg.database_url(), schema=schema, application_name=name)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def test_idle_connections_cut_by_the_server_are_replaced(store: PostgresStore, name: str) -> None:
    await store.create_session(session("s1"), delivery("d1"))
    await asyncio.gather(*(store.read_events("s1") for _ in range(4)))  # several pooled connections
    assert pg.terminate_backends(name) >= 2  # the pool's and the listener's
    assert (await store.get_session("s1")) is not None
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]
    await store.commit("s1", Commit(events=events(0, b"after")))
    assert [e.line for e in await store.read_events("s1")] == [b"after"]


async def _hold_session_rows(schema: str, held: asyncio.Event, release: asyncio.Event) -> None:
    """Lock every session row in another connection until `release` (writers of a session queue behind it)."""
    async with await psycopg.AsyncConnection.connect(pg.database_url()) as conn:
        await conn.execute(f'SELECT 1 FROM "{schema}".sessions FOR UPDATE')
        held.set()
        await release.wait()
        await conn.rollback()


async def test_a_commit_cut_before_it_committed_is_run_again(store: PostgresStore, schema: str, name: str) -> None:
    for sid in ("s1", "s2", "s3"):
        await store.create_session(session(sid))
    held, release = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(_hold_session_rows(schema, held, release))
    await held.wait()
    writes = asyncio.gather(
        store.commit("s1", Commit(events=events(0, b"one", b"two"))),
        store.enqueue("s2", delivery("d1")),  # unkeyed: runs in a transaction
        store.enqueue("s3", delivery("d2", key="k2")),  # keyed: accepted once however often it runs
    )
    await asyncio.sleep(0.3)  # all three wait for the row lock, inside their statements
    assert pg.terminate_backends(name) >= 3
    release.set()
    await holder
    _, first, second = await writes
    assert not first.duplicate and not second.duplicate  # a retry of one's own delivery is no duplicate
    assert [e.line for e in await store.read_events("s1")] == [b"one", b"two"]
    assert [d.id for d in await store.pending_deliveries("s2")] == ["d1"]
    assert [d.id for d in await store.pending_deliveries("s3")] == ["d2"]
    assert store.retries >= 3


async def test_reads_retry_and_an_unsafe_write_is_unavailable(name: str) -> None:
    pg.require()
    tries = 0

    async def slow(conn: Connection) -> int:
        nonlocal tries
        tries += 1
        cursor = await conn.execute("SELECT pg_sleep(%s), 7", (0.5 if tries == 1 else 0,))
        row = await cursor.fetchone()
        assert row is not None
        return int(row[1])

    async def cut_soon() -> None:
        await asyncio.sleep(0.2)
        pg.terminate_backends(name)

    pool = Pool(f"{pg.database_url()}?application_name={name}", 2)
    await pool.open()
    try:
        cutter = asyncio.create_task(cut_soon())
        assert await pool.run(slow, "read") == 7 and tries == 2
        await cutter
        tries = 0
        cutter = asyncio.create_task(cut_soon())
        with pytest.raises(StoreUnavailable, match="may have been committing"):
            await pool.run(slow, "once")  # not known to be safe to run again: refused, never guessed
        await cutter
        assert tries == 1

        async def commit_then_sleep(conn: Connection) -> None:
            async with transaction(conn):
                await conn.execute("SELECT 1")
            await conn.execute("SELECT pg_sleep(0.5)")  # lost after its COMMIT: the try counts as committing

        cutter = asyncio.create_task(cut_soon())
        with pytest.raises(StoreUnavailable):
            await pool.run(commit_then_sleep, "transaction")
        await cutter
    finally:
        await pool.close()


async def test_an_unreachable_database_is_unavailable() -> None:
    pool = Pool("postgresql://postgres@127.0.0.1:1/test?connect_timeout=1", 1, timeout=1.0)
    with pytest.raises(StoreUnavailable, match="127.0.0.1:1"):
        await pool.open()
