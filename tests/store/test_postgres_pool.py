"""The Postgres store's connections: kept between operations, handed to whoever waits, and one cursor each."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest

from eve_runtime.store import postgres_pool
from eve_runtime.store.postgres_pool import Connection, Pool, execute
from tests import pg

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
async def pool() -> AsyncIterator[Pool]:
    pg.require()
    pool = Pool(f"{pg.database_url()}?application_name=eve-pool-{uuid.uuid4().hex[:8]}", 2, timeout=3.0)
    await pool.open()
    try:
        yield pool
    finally:
        await pool.close()


async def _backend(conn: Connection) -> int:
    row = await (await execute(conn, "SELECT pg_backend_pid()")).fetchone()
    assert row is not None
    return int(row[0])


def _checkouts(pool: Pool) -> int:
    return int(pool._pool.get_stats().get("requests_num", 0))


async def test_the_next_operation_takes_the_connection_the_last_one_used(pool: Pool) -> None:
    first = await pool.run(_backend, "read")
    before = _checkouts(pool)
    assert [await pool.run(_backend, "read") for _ in range(5)] == [first] * 5
    assert _checkouts(pool) == before  # none of them went through psycopg's pool


async def test_a_connection_goes_back_to_the_pool_once_kept_long_enough(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_pool, "KEEP_SECONDS", 0.0)
    await pool.run(_backend, "read")
    before = _checkouts(pool)
    for _ in range(3):
        await pool.run(_backend, "read")
    assert _checkouts(pool) == before + 3


async def test_callers_waiting_for_a_connection_get_one_as_others_finish(pool: Pool) -> None:
    async def nap(conn: Connection) -> int:
        await execute(conn, "SELECT pg_sleep(0.2)")
        return await _backend(conn)

    # Six operations on two connections: four wait in psycopg's pool, and are handed the
    # connections the first ones finish with (kept, they would wait out the 3 s timeout).
    backends = await asyncio.wait_for(asyncio.gather(*(pool.run(nap, "read") for _ in range(6))), 2.5)
    assert len(set(backends)) == 2


async def test_a_failed_statement_leaves_the_kept_cursor_usable(pool: Pool) -> None:
    async def fail(conn: Connection) -> None:
        await execute(conn, "SELECT no_such_column FROM pg_class")

    with pytest.raises(psycopg.errors.UndefinedColumn):
        await pool.run(fail, "read")

    async def rows(conn: Connection) -> list[tuple[object, ...]]:
        return await (await execute(conn, "SELECT %s::int, %s::text", (7, "seven"))).fetchall()

    assert await pool.run(rows, "read") == [(7, "seven")]


async def test_a_connection_coming_back_after_close_is_closed_not_kept() -> None:
    pg.require()
    pool = Pool(pg.database_url(), 2, timeout=3.0)
    await pool.open()
    held: list[Connection] = []

    async def nap(conn: Connection) -> None:
        held.append(conn)
        await execute(conn, "SELECT pg_sleep(0.3)")

    running = asyncio.create_task(pool.run(nap, "read"))
    await asyncio.sleep(0.1)
    await pool.close()
    await running
    assert held and held[0].closed
