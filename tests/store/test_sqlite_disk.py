"""The SQLite store and its disk: a bounded write-ahead log, a free-space floor, and a full disk refused cleanly."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from eve_runtime.store import Commit, SqliteStore, StoreError, StoreUnavailable, sqlite as sqlite_module
from eve_runtime.store.sqlite import FREE_SPACE_MARGIN_MB, FREE_SPACE_TTL, free_megabytes
from tests.store.conftest import delivery, events, session

pytestmark = pytest.mark.anyio


async def test_the_write_ahead_log_is_checkpointed_and_truncated(tmp_path: Path) -> None:
    limit = 256 * 1024
    store = SqliteStore(tmp_path, wal_limit=limit)
    await store.open()
    try:
        await store.create_session(session("s1"))
        big = os.urandom(512 * 1024).hex().encode()  # 1 MiB a line: each commit outgrows the limit
        for n in range(4):
            await store.commit("s1", Commit(events=events(n, big)))
        wal = Path(f"{store.path}-wal")
        assert wal.stat().st_size <= limit, wal.stat().st_size  # SQLite alone leaves it at its largest
        assert store.stats.checkpoints >= 1
        assert [len(e.line) for e in await store.read_events("s1")] == [len(big)] * 4  # nothing lost
    finally:
        await store.close()


async def test_the_free_space_is_read_once_a_second_when_far_from_the_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[Path] = []
    free = [1_000_000.0]

    def counted(directory: Path) -> float:
        reads.append(directory)
        return free[0]

    monkeypatch.setattr(sqlite_module, "free_megabytes", counted)
    store = SqliteStore(tmp_path)
    await store.open()
    try:
        await store.create_session(session("s1"), delivery("d1"))
        for index in range(5):
            await store.enqueue("s1", delivery(f"d{index + 2}"))
        assert len(reads) == 1
        store._free = (store._free[0] - FREE_SPACE_TTL, store._free[1])  # a second later
        await store.enqueue("s1", delivery("d9"))
        assert len(reads) == 2
        free[0] = store.min_free_mb + FREE_SPACE_MARGIN_MB / 2  # near the floor: every check reads it
        store._free = (store._free[0] - FREE_SPACE_TTL, store._free[1])
        await store.enqueue("s1", delivery("d10"))
        free[0] = store.min_free_mb / 2
        with pytest.raises(StoreUnavailable):
            await store.enqueue("s1", delivery("d11"))
        free[0] = store.min_free_mb * 2  # space freed: the next message is taken at once
        await store.enqueue("s1", delivery("d12"))
        assert len(reads) == 5
    finally:
        await store.close()


async def test_new_work_is_refused_under_the_free_space_floor(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    await store.open()
    try:
        await store.create_session(session("s1"), delivery("d1"))
        assert await store.health() is None
        store.min_free_mb = free_megabytes(tmp_path) + 1024  # as if the disk were that close to full
        with pytest.raises(StoreUnavailable) as refused:
            await store.enqueue("s1", delivery("d2"))
        assert "EVE_MIN_FREE_MB" in refused.value.reason and str(tmp_path) not in refused.value.reason
        with pytest.raises(StoreUnavailable):
            await store.create_session(session("s2"))
        health = await store.health()
        assert health is not None and "floor" in health
        await store.commit("s1", Commit(events=events(0, b"a turn under way goes on")))  # not new work
        assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]
        assert await store.get_session("s2") is None
        store.min_free_mb = 0
        await store.enqueue("s1", delivery("d2"))
        assert await store.health() is None
    finally:
        await store.close()


async def test_a_chunk_over_the_value_limit_comes_in_smaller_chunks(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, tail_cache_bytes=0)  # every read from the database
    await store.open()
    try:
        await store.create_session(session("s1"))
        lines = [f"line {n:04}".encode() * 10 for n in range(50)]  # 90 bytes each, 4.5 KB in all
        await store.commit("s1", Commit(events=events(0, *lines)))
        assert store._reader is not None
        await store._reader.submit(lambda conn: conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000))  # ~10 lines a value
        body, cursor = b"", 0
        while True:
            chunk = await store.read_chunk("s1", cursor, 50)
            if not chunk.count:
                break
            assert 1 <= chunk.count <= 10 and len(chunk.body) <= 1000
            body, cursor = body + chunk.body, cursor + chunk.count
        assert body == b"".join(line + b"\n" for line in lines)
        await store._reader.submit(lambda conn: conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 50))  # not one line fits now
        with pytest.raises(StoreError, match="too big"):
            await store.read_chunk("s1", 0, 50)
    finally:
        await store.close()
