"""What only the Postgres store promises: many store objects (processes) on one schema, NOTIFY, clear errors."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest

from eve_runtime.store import Commit, OwnershipLost, PostgresStore, ScheduleClaim, StoreError
from eve_runtime.store.postgres_schema import SCHEMA_VERSION
from tests import pg
from tests.store.conftest import delivery, events, session

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
async def pair(schema: str) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    """Two stores on one schema: what two eve processes on one database see."""
    a = PostgresStore(pg.database_url(), schema=schema)
    b = PostgresStore(pg.database_url(), schema=schema)
    await a.open()
    await b.open()
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


async def test_a_reader_in_another_process_wakes_on_commit(pair: tuple[PostgresStore, PostgresStore]) -> None:
    a, b = pair
    await a.create_session(session("s1"))
    waiter = asyncio.ensure_future(b.wait_for_events("s1", 0, timeout=30))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    await a.commit("s1", Commit(events=events(0, b"x", b"y")))
    assert await asyncio.wait_for(waiter, 5) == 2
    assert [e.line for e in await b.read_events("s1")] == [b"x", b"y"]


async def _until(condition: Callable[[], bool]) -> bool:
    for _ in range(500):
        if condition():
            return True
        await asyncio.sleep(0.01)
    return condition()


async def test_a_reader_in_another_process_makes_the_session_watched(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = pair
    await a.create_session(session("s1"))
    await a.create_session(session("s2"))
    assert not a.watched("s1") and not b.watched("s1")
    waiter = asyncio.ensure_future(b.wait_for_events("s1", 0, timeout=30))
    await asyncio.sleep(0)
    assert b.watched("s1")  # its own reader: known at once
    assert await _until(lambda: a.watched("s1")), "the owner heard of the reader in the other process"
    assert not a.watched("s2")
    waiter.cancel()


async def test_after_its_listener_was_cut_every_session_counts_as_watched(schema: str) -> None:
    name = f"eve-watch-{uuid.uuid4().hex[:10]}"
    store = PostgresStore(pg.database_url(), schema=schema, application_name=name)
    await store.open()
    try:
        await store.create_session(session("s1"))
        assert not store.watched("s1")
        assert pg.terminate_backends(name) >= 1  # announcements made meanwhile are lost
        assert await _until(lambda: store.watched("s1")), "a store that may have missed announcements says watched"
        assert (await store.get_session("s1")) is not None
    finally:
        await store.close()


async def test_an_unkeyed_delivery_sent_again_after_a_lost_connection_is_accepted_once(
    pair: tuple[PostgresStore, PostgresStore], schema: str
) -> None:
    from eve_runtime.store import postgres_ops as ops

    a, _ = pair
    await a.create_session(session("s1"))
    first = await a.enqueue("s1", delivery("d1"))
    conn = await psycopg.AsyncConnection.connect(pg.database_url(), autocommit=True)
    try:
        await conn.execute(f'SET search_path TO "{schema}"')
        # the first try committed but its answer was lost: the try sent again finds it
        again = await ops.enqueue(conn, "s1", delivery("d1"), None, retried=True)
        assert again.delivery.id == "d1" and not again.duplicate and again.delivery.seq == first.delivery.seq
        with pytest.raises(StoreError, match="already exists"):  # a first try with a taken id is refused
            await ops.enqueue(conn, "s1", delivery("d1"), None)
    finally:
        await conn.close()
    assert [d.id for d in await a.pending_deliveries("s1")] == ["d1"]


async def test_a_delivery_is_announced_to_the_other_processes(pair: tuple[PostgresStore, PostgresStore]) -> None:
    a, b = pair
    heard: asyncio.Queue[str] = asyncio.Queue()
    own: list[str] = []
    b.on_delivery(heard.put_nowait)
    a.on_delivery(own.append)
    await a.create_session(session("s1"), delivery("d0"))
    assert await asyncio.wait_for(heard.get(), 5) == "s1"
    await a.enqueue("s1", delivery("d1", key="k"))
    assert await asyncio.wait_for(heard.get(), 5) == "s1"
    assert (await a.enqueue("s1", delivery("d2", key="k"))).duplicate  # a duplicate is not announced
    await a.enqueue("s1", delivery("d3"))
    assert await asyncio.wait_for(heard.get(), 5) == "s1"
    assert heard.empty() and own == []  # a process is not told of its own deliveries


async def test_a_delivery_for_a_session_held_here_is_not_announced(pair: tuple[PostgresStore, PostgresStore]) -> None:
    a, b = pair
    heard: asyncio.Queue[str] = asyncio.Queue()
    b.on_delivery(heard.put_nowait)
    await a.create_session(session("s1"))
    assert await a.acquire("s1", "A", ttl=30) is not None
    await a.enqueue("s1", delivery("d1"))  # only the holder runs the session: it takes its own delivery
    await a.release("s1", "A")
    await a.enqueue("s1", delivery("d2"))
    assert await asyncio.wait_for(heard.get(), 5) == "s1"
    assert await a.acquire("s1", "A", ttl=0.2) is not None  # half its time left at most: announced
    await asyncio.sleep(0.15)
    await a.enqueue("s1", delivery("d3"))
    assert await asyncio.wait_for(heard.get(), 5) == "s1"
    assert heard.empty() and [d.id for d in await b.pending_deliveries("s1")] == ["d1", "d2", "d3"]


async def test_fencing_across_processes(pair: tuple[PostgresStore, PostgresStore]) -> None:
    a, b = pair
    await a.create_session(session("s1"))
    fence_a = await a.acquire("s1", "A", ttl=0.2)
    assert fence_a is not None and await b.acquire("s1", "B", ttl=30) is None
    await asyncio.sleep(0.3)
    fence_b = await b.acquire("s1", "B", ttl=30)
    assert fence_b == fence_a + 1
    with pytest.raises(OwnershipLost):
        await a.commit("s1", Commit(events=events(0, b"stale"), fence=fence_a))
    await b.commit("s1", Commit(events=events(0, b"fresh"), fence=fence_b))
    assert [e.line for e in await a.read_events("s1")] == [b"fresh"]


async def test_concurrent_creators_in_two_processes_create_once(pair: tuple[PostgresStore, PostgresStore]) -> None:
    a, b = pair
    results = await asyncio.gather(
        *(
            store.create_session(session(f"s{i}", operation_id="op"), delivery(f"d{i}"))
            for i, store in enumerate([a, b] * 4)
        )
    )
    assert sum(created for _, created in results) == 1
    assert len({record.id for record, _ in results}) == 1


async def test_the_url_schema_is_used_when_none_is_given(schema: str) -> None:
    store = PostgresStore(pg.schema_url(schema))
    await store.open()
    try:
        assert store.schema == schema
        await store.create_session(session("s1"))
    finally:
        await store.close()
    other = PostgresStore(pg.database_url(), schema=schema)
    await other.open()
    try:
        assert [s.id for s in await other.list_sessions()] == ["s1"]
    finally:
        await other.close()


async def test_a_missing_search_path_schema_is_a_clear_error() -> None:
    pg.require()
    store = PostgresStore(pg.schema_url("eve_test_no_such_schema"))
    with pytest.raises(StoreError, match="CREATE SCHEMA"):
        await store.open()


async def test_unreachable_server_errors_name_the_server_never_the_password() -> None:
    store = PostgresStore("postgresql://eve:sup3rsecret@127.0.0.1:1/db?connect_timeout=2")
    with pytest.raises(StoreError) as caught:
        await store.open()
    message = str(caught.value)
    assert "127.0.0.1:1" in message and "sup3rsecret" not in message


async def test_a_schema_of_a_newer_eve_is_refused(schema: str) -> None:
    store = PostgresStore(pg.database_url(), schema=schema)
    await store.open()
    await store.close()
    with psycopg.connect(pg.database_url(), autocommit=True) as conn:
        conn.execute(f'UPDATE "{schema}".eve_meta SET value = %s', (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer eve"):
        await PostgresStore(pg.database_url(), schema=schema).open()


async def test_a_version_2_schema_gains_the_schedule_table(schema: str) -> None:
    store = PostgresStore(pg.database_url(), schema=schema)
    await store.open()
    await store.create_session(session("s1"), delivery("d1"))
    await store.close()
    with psycopg.connect(pg.database_url(), autocommit=True) as conn:  # the schema eve wrote before 3
        conn.execute(f'DROP TABLE "{schema}".schedule_fires')
        conn.execute(f'UPDATE "{schema}".eve_meta SET value = %s', ("2",))
    store = PostgresStore(pg.database_url(), schema=schema)
    await store.open()
    try:
        assert await store.get_session("s1") is not None
        assert await store.claim_schedule_fire("digest", 60.0) == ScheduleClaim(claimed=True, previous=None)
    finally:
        await store.close()
    with psycopg.connect(pg.database_url(), autocommit=True) as conn:
        row = conn.execute(f'SELECT value FROM "{schema}".eve_meta WHERE key = %s', ("schema_version",)).fetchone()
    assert row is not None and row[0] == str(SCHEMA_VERSION) == "4"


async def test_two_processes_claiming_one_fire_time_have_one_winner(pair: tuple[PostgresStore, PostgresStore]) -> None:
    a, b = pair
    for minute in range(1, 6):
        at = 60.0 * minute
        claims = await asyncio.gather(*(store.claim_schedule_fire("digest", at) for store in (a, b, a, b)))
        assert [claim.claimed for claim in claims].count(True) == 1, claims
        winner = next(claim for claim in claims if claim.claimed)
        assert winner.previous == (None if minute == 1 else at - 60.0)


async def test_a_cancelled_call_leaves_the_pool_usable(schema: str) -> None:
    store = PostgresStore(pg.database_url(), schema=schema, pool_size=1)
    await store.open()
    try:
        await store.create_session(session("s1"))
        slow = asyncio.ensure_future(store._rows("SELECT pg_sleep(5)"))
        await asyncio.sleep(0.1)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        assert await asyncio.wait_for(store.get_session("s1"), 5) is not None
    finally:
        await store.close()


async def test_the_store_recovers_when_postgres_drops_its_connections(schema: str) -> None:
    name = f"eve-test-{uuid.uuid4().hex[:8]}"
    store = PostgresStore(pg.database_url(), schema=schema, application_name=name)
    other = PostgresStore(pg.database_url(), schema=schema)
    await store.open()
    await other.open()
    try:
        await store.create_session(session("s1"))
        with psycopg.connect(pg.database_url(), autocommit=True) as conn:
            killed = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
        assert killed is not None and killed[0] >= 2  # the pooled connection and the listener
        failures = 0
        for _ in range(5):  # a broken pooled connection fails one call, then is replaced
            try:
                assert await store.get_session("s1") is not None
                break
            except StoreError:
                failures += 1
        assert failures <= 1
        waiter = asyncio.ensure_future(store.wait_for_events("s1", 0, timeout=30))
        await asyncio.sleep(0.5)  # the listener reconnects meanwhile
        await other.commit("s1", Commit(events=events(0, b"after the outage")))
        assert await asyncio.wait_for(waiter, 10) == 1
    finally:
        await store.close()
        await other.close()


async def test_processes_opening_a_new_schema_at_once_all_succeed() -> None:
    pg.require()
    name = f"eve_test_{uuid.uuid4().hex[:12]}"  # not created yet: the stores create it together
    stores = [PostgresStore(pg.database_url(), schema=name) for _ in range(4)]
    try:
        await asyncio.gather(*(store.open() for store in stores))
        await stores[0].create_session(session("s1"), delivery("d1"))
        assert await stores[3].get_session("s1") is not None
    finally:
        for store in stores:
            await store.close()
        with psycopg.connect(pg.database_url(), autocommit=True) as conn:
            conn.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(name)))


async def test_a_chunk_over_the_value_limit_comes_in_smaller_chunks(
    schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eve_runtime.store import postgres_ops

    real_one = postgres_ops._one
    asked: list[int] = []

    async def limited(conn: Any, query: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if "string_agg" in query:
            asked.append(params[2] - params[1])
            if params[2] - params[1] > 10:  # as if over a value's 1 GB: Postgres refuses the aggregate
                raise psycopg.errors.ProgramLimitExceeded("out of memory")
        return await real_one(conn, query, params)

    monkeypatch.setattr(postgres_ops, "_one", limited)
    store = PostgresStore(pg.database_url(), schema=schema)
    await store.open()
    try:
        await store.create_session(session("s1"))
        await store.commit("s1", Commit(events=events(0, *(str(n).encode() for n in range(50)))))
        chunk = await store.read_chunk("s1", 0, 50)
        assert chunk.count == 6 and chunk.body == b"0\n1\n2\n3\n4\n5\n"  # 50 -> 25 -> 12 -> 6
        assert asked == [50, 25, 12, 6]
    finally:
        await store.close()


async def test_an_enqueue_tells_the_sessions_pending_deliveries_while_there_are_few(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = pair
    await a.create_session(session("s1"), delivery("d0"))
    told = await b.enqueue("s1", delivery("d1"))  # another process's store sees the first one too
    assert told.pending is not None
    assert [d.id for d in told.pending] == [d.id for d in await a.pending_deliveries("s1")] == ["d0", "d1"]
    assert told.pending == tuple(await a.pending_deliveries("s1"))
    await a.commit("s1", Commit(consumed=["d0", "d1"]))
    told = await a.enqueue("s1", delivery("d2", key="k"))
    assert told.pending is not None and [d.id for d in told.pending] == ["d2"]
    assert (await a.enqueue("s1", delivery("d3", key="k"))).pending is None  # a duplicate tells none
    for number in range(3, 11):
        told = await a.enqueue("s1", delivery(f"d{number + 1}"))
        assert told.pending is not None and len(told.pending) == number - 1  # d2 and the ones since
    told = await a.enqueue("s1", delivery("d12"))  # nine others wait: too many to tell
    assert told.pending is None and len(await a.pending_deliveries("s1")) == 10
