"""What only the SQLite store promises: one process per store, WAL + FULL sync, group commit, schema versions."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import sys
import textwrap
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.store import (
    Commit,
    EventIndexConflict,
    OwnershipLost,
    ScheduleClaim,
    SessionHandoff,
    SqliteStore,
    StoreError,
    StoreLocked,
    open_local_store,
)
from eve_runtime.store.sqlite_schema import SCHEMA_VERSION
from eve_runtime.store.sqlite_writer import MAX_GROUP
from tests.store.conftest import delivery, events, session

pytestmark = pytest.mark.anyio

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"

OPEN_IN_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from eve_runtime.store import SqliteStore, StoreLocked

    async def main() -> int:
        store = SqliteStore(Path(sys.argv[1]))
        try:
            await store.open()
        except StoreLocked as exc:
            print(f"StoreLocked: {exc}", file=sys.stderr)
            return 3
        await store.close()
        return 0

    sys.exit(asyncio.run(main()))
    """
)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await open_local_store(tmp_path / "data")
    try:
        yield opened
    finally:
        await opened.close()


async def run_child(directory: Path) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(RUNTIME), os.environ.get("PYTHONPATH", "")])}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        OPEN_IN_CHILD,
        str(directory),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, stderr.decode()


# -- one process per store ------------------------------------------------------------------------


async def test_a_second_store_in_this_process_is_refused(store: SqliteStore) -> None:
    assert (store.directory / "LOCK").read_text().strip() == str(os.getpid())
    second = SqliteStore(store.directory)
    with pytest.raises(StoreLocked) as caught:
        await second.open()
    message = str(caught.value)
    assert str(store.directory) in message and f"pid {os.getpid()}" in message and "Stop that process" in message
    with pytest.raises(StoreError):  # it opened nothing
        await second.get_session("s1")
    await store.close()
    await second.open()
    await second.close()


async def test_a_second_process_is_refused_until_the_first_closes(store: SqliteStore) -> None:
    code, stderr = await run_child(store.directory)
    assert code == 3, stderr
    assert "StoreLocked" in stderr and f"pid {os.getpid()}" in stderr and str(store.directory) in stderr
    assert "Stop that process" in stderr
    await store.close()
    code, stderr = await run_child(store.directory)
    assert code == 0, stderr


async def test_the_same_object_reopens(store: SqliteStore) -> None:
    await store.create_session(session("s1"))
    await store.open()  # already open: nothing happens
    await store.close()
    await store.open()
    assert await store.get_session("s1") is not None


async def test_open_creates_the_directory(tmp_path: Path) -> None:
    directory = tmp_path / "a" / "b" / "workflow-data"
    store = await open_local_store(directory)
    try:
        assert (directory / "eve.sqlite3").is_file() and (directory / "LOCK").is_file()
    finally:
        await store.close()


async def test_an_unusable_directory_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    store = SqliteStore(tmp_path / "file" / "data")
    with pytest.raises(StoreError, match="lock file"):
        await store.open()


# -- durability settings --------------------------------------------------------------------------


async def test_wal_and_full_sync_are_set(store: SqliteStore) -> None:
    assert await store.pragmas() == {"journal_mode": "wal", "synchronous": 2}  # 2 = FULL
    with contextlib.closing(sqlite3.connect(store.path)) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.sqlite_version == sqlite3.sqlite_version


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    store = await open_local_store(directory)
    await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    for _ in range(2):  # the failed open released the lock
        with pytest.raises(StoreError, match="newer eve") as caught:
            await store.open()
        assert not isinstance(caught.value, StoreLocked)
    with pytest.raises(StoreError):
        await store.get_session("s1")


async def test_a_version_1_database_is_migrated_keeping_its_sessions(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    directory.mkdir()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:  # the schema eve wrote before 2
        raw.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, agent TEXT NOT NULL, created_at REAL NOT NULL, "
            "eve_version TEXT NOT NULL, status TEXT NOT NULL, deadline REAL, operation_id TEXT)"
        )
        raw.execute(
            "CREATE TABLE events (session_id TEXT NOT NULL, idx INTEGER NOT NULL, type TEXT NOT NULL, "
            "line BLOB NOT NULL, PRIMARY KEY (session_id, idx))"
        )
        raw.execute("INSERT INTO sessions VALUES ('s1', 'main', 1.0, '0.1.0', 'active', 5.0, NULL)")
        raw.execute("PRAGMA user_version = 1")
        raw.commit()
    store = await open_local_store(directory)
    try:
        record = await store.get_session("s1")
        assert record is not None and (record.deadline, record.deployment) == (5.0, None)
        await store.commit("s1", Commit(handoff=SessionHandoff("sha256:new", 9.0)))
        record = await store.get_session("s1")
        assert record is not None and (record.deadline, record.deployment) == (9.0, "sha256:new")
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


# -- group commit --------------------------------------------------------------------------------


async def hold_writer(store: SqliteStore) -> tuple[threading.Event, asyncio.Future[bool]]:
    """Block the writer thread on a job until the returned event is set, so commits queue up."""
    gate = threading.Event()
    assert store._writer is not None
    held = asyncio.ensure_future(store._writer.submit(lambda conn: gate.wait(10)))
    await asyncio.sleep(0)
    return gate, held


async def test_queued_commits_share_one_transaction(store: SqliteStore) -> None:
    sessions = [f"s{i}" for i in range(200)]
    await asyncio.gather(*(store.create_session(session(s)) for s in sessions))
    before = (store.stats.transactions, store.stats.jobs)

    gate, held = await hold_writer(store)
    commits = [
        asyncio.ensure_future(store.commit(s, Commit(events=events(0, s.encode()), history=[f'"{s}"'])))
        for s in sessions
    ]
    for _ in range(3):
        await asyncio.sleep(0)
    gate.set()
    assert await held
    await asyncio.gather(*commits)

    assert len(sessions) < MAX_GROUP
    assert store.stats.jobs - before[1] == len(sessions) + 1
    assert store.stats.transactions - before[0] <= 2  # the held job's, then everything queued behind it

    await store.close()
    reopened = await open_local_store(store.directory)
    try:
        for s in sessions:
            assert [e.line for e in await reopened.read_events(s)] == [s.encode()]
            assert await reopened.load_history(s) == [f'"{s}"']
    finally:
        await reopened.close()


async def test_a_refused_commit_fails_only_its_caller(store: SqliteStore) -> None:
    for name in ("good1", "conflict", "fenced", "good2"):
        await store.create_session(session(name), delivery(f"{name}-d"))
    await store.commit("conflict", Commit(events=events(0, b"first")))
    old = await store.acquire("fenced", "A", ttl=0)
    await store.acquire("fenced", "B", ttl=60)

    gate, held = await hold_writer(store)
    outcomes = asyncio.gather(
        store.commit("good1", Commit(events=events(0, b"g1"), consumed=["good1-d"])),
        store.commit("conflict", Commit(events=events(0, b"stale"), checkpoint='"x"')),
        store.commit("fenced", Commit(events=events(0, b"stale"), fence=old)),
        store.enqueue("good2", delivery("good1-d")),  # a taken delivery id
        store.commit("good2", Commit(events=events(0, b"g2"), checkpoint='"g2"')),
        return_exceptions=True,
    )
    for _ in range(3):
        await asyncio.sleep(0)
    gate.set()
    await held
    results = await outcomes
    assert results[0] is None and results[4] is None
    assert isinstance(results[1], EventIndexConflict)
    assert isinstance(results[2], OwnershipLost)
    assert isinstance(results[3], StoreError)

    await store.close()
    await store.open()
    assert [e.line for e in await store.read_events("good1")] == [b"g1"]
    assert await store.pending_deliveries("good1") == []
    assert [e.line for e in await store.read_events("conflict")] == [b"first"]
    assert await store.load_checkpoint("conflict") is None
    assert await store.event_count("fenced") == 0
    assert [d.id for d in await store.pending_deliveries("good2")] == ["good2-d"]
    assert await store.load_checkpoint("good2") == '"g2"'


async def test_many_sessions_committing_at_once_are_all_durable(store: SqliteStore) -> None:
    sessions = [f"s{i}" for i in range(50)]
    await asyncio.gather(*(store.create_session(session(s)) for s in sessions))

    async def turn(session_id: str) -> None:
        for i in range(10):
            await store.commit(session_id, Commit(events=events(i, f"{session_id}/{i}".encode()), checkpoint=str(i)))

    await asyncio.gather(*(turn(s) for s in sessions))
    assert store.stats.transactions < store.stats.jobs  # commits were grouped
    await store.close()
    reopened = await open_local_store(store.directory)
    try:
        for s in sessions:
            assert [e.line for e in await reopened.read_events(s)] == [f"{s}/{i}".encode() for i in range(10)]
            assert await reopened.load_checkpoint(s) == "9"
    finally:
        await reopened.close()


async def test_reads_never_see_a_partial_commit(store: SqliteStore) -> None:
    await store.create_session(session("s1"))
    stop = False

    async def reader() -> None:
        while not stop:
            rows = await store.read_events("s1")
            history = await store.load_history("s1")
            # Every commit writes 3 events and 1 history message; a reader sees whole commits
            # (the history, read later, holds at least the messages of the commits seen).
            assert len(rows) % 3 == 0 and [r.index for r in rows] == list(range(len(rows)))
            assert history[: len(rows) // 3] == [str(n) for n in range(len(rows) // 3)]

    task = asyncio.ensure_future(reader())
    for n in range(30):
        await store.commit("s1", Commit(events=events(3 * n, b"a", b"b", b"c"), history=[str(n)]))
    stop = True
    await task


async def test_a_job_that_aborts_the_transaction_fails_alone(store: SqliteStore) -> None:
    """When SQLite loses the whole group transaction (I/O error, disk full), the others run again."""
    for name in ("a", "b", "c"):
        await store.create_session(session(name))
    assert store._writer is not None
    submit = store._writer.submit

    def abort_and_raise(conn: sqlite3.Connection) -> None:
        conn.execute("ROLLBACK")
        raise sqlite3.OperationalError("disk I/O error (simulated)")

    def abort_quietly(conn: sqlite3.Connection) -> None:
        conn.execute("ROLLBACK")

    gate, held = await hold_writer(store)
    outcomes = asyncio.gather(
        store.commit("a", Commit(events=events(0, b"a"))),
        submit(abort_and_raise),
        store.commit("b", Commit(events=events(0, b"b"))),
        submit(abort_quietly),
        store.commit("c", Commit(events=events(0, b"c"))),
        return_exceptions=True,
    )
    for _ in range(3):
        await asyncio.sleep(0)
    gate.set()
    await held
    results = await outcomes
    assert results[0] is None and results[2] is None and results[4] is None
    assert isinstance(results[1], StoreError) and "simulated" in str(results[1])
    assert isinstance(results[3], StoreError)
    await store.close()
    await store.open()
    for name in ("a", "b", "c"):
        assert [e.line for e in await store.read_events(name)] == [name.encode()]


async def test_a_schema_2_database_gains_the_address_table(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    store = await open_local_store(directory)
    await store.create_session(session("s1"), delivery("d1"))
    await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        raw.execute("DROP TABLE addresses")
        raw.execute("DROP TABLE channel_states")
        raw.execute("DROP TABLE schedule_fires")
        raw.execute("PRAGMA user_version = 2")
    store = await open_local_store(directory)
    try:
        assert await store.get_session("s1") is not None
        assert await store.claim_address("s1", "webhook:t") == "s1"
        assert await store.address_holder("webhook:t") == "s1"
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6


async def test_a_schema_3_database_gains_the_channel_state_table(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    store = await open_local_store(directory)
    await store.create_session(session("s1"), delivery("d1"))
    await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        raw.execute("DROP TABLE channel_states")
        raw.execute("DROP TABLE schedule_fires")
        raw.execute("PRAGMA user_version = 3")
    store = await open_local_store(directory)
    try:
        await store.save_channel_state("s1", '{"n": 1}')
        assert await store.load_channel_state("s1") == '{"n": 1}'
    finally:
        await store.close()


async def test_a_schema_4_database_gains_the_schedule_table(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    store = await open_local_store(directory)
    await store.create_session(session("s1"), delivery("d1"))
    await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        raw.execute("DROP TABLE schedule_fires")
        raw.execute("PRAGMA user_version = 4")
    store = await open_local_store(directory)
    try:
        assert await store.get_session("s1") is not None
        assert await store.claim_schedule_fire("digest", 60.0) == ScheduleClaim(claimed=True, previous=None)
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
