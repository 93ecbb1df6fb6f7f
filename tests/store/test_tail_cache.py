"""The SQLite store's cache of the newest event lines: what it holds, what it drops, what it serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from eve_runtime.store import Commit, EventIndexConflict, EventRow, LineChunk, SqliteStore, StoreError
from eve_runtime.store.tail_cache import TailCache
from tests.store.conftest import events, session

pytestmark = pytest.mark.anyio

NONE: frozenset[str] = frozenset()


def rows(start: int, count: int, size: int = 10, type: str = "t") -> list[EventRow]:
    return [EventRow(start + i, type, b"%0*d" % (size, start + i)) for i in range(count)]


def body(start: int, count: int, size: int = 10) -> bytes:
    return b"".join(b"%0*d\n" % (size, start + i) for i in range(count))


def test_it_serves_what_it_holds_and_ends_where_its_lines_end() -> None:
    cache = TailCache(10_000)
    cache.add("s1", rows(0, 3))
    cache.add("s1", rows(3, 2))
    assert cache.chunk("s1", 0, 5, NONE) == LineChunk(5, body(0, 5))
    assert cache.chunk("s1", 1, 3, NONE) == LineChunk(2, body(1, 2))
    assert cache.chunk("s1", 3, 99, NONE) == LineChunk(2, body(3, 2))  # the newer events are not held yet
    assert cache.chunk("s1", 5, 9, NONE) is None
    assert cache.chunk("s2", 0, 9, NONE) is None
    assert cache.chunk("s1", 2, 2, NONE) == LineChunk(0, b"")


def test_it_stops_after_the_first_stop_type() -> None:
    cache = TailCache(10_000)
    cache.add("s1", [EventRow(i, t, t.encode()) for i, t in enumerate(["a", "end", "b"])])
    assert cache.chunk("s1", 0, 3, frozenset({"end"})) == LineChunk(2, b"a\nend\n", stopped=True)
    assert cache.chunk("s1", 2, 3, frozenset({"end"})) == LineChunk(1, b"b\n")


def test_a_gap_starts_the_session_again_from_the_new_events() -> None:
    cache = TailCache(10_000)
    cache.add("s1", rows(0, 3))
    cache.add("s1", rows(5, 2))  # events 3 and 4 were committed without passing through the cache
    assert cache.chunk("s1", 0, 9, NONE) is None
    assert cache.chunk("s1", 5, 9, NONE) == LineChunk(2, body(5, 2))
    assert cache.size == 2 * (10 + 64)


def test_the_least_recently_used_sessions_go_first() -> None:
    per_session = 5 * (10 + 64)
    cache = TailCache(3 * per_session)
    for name in ("a", "b", "c"):
        cache.add(name, rows(0, 5))
    assert cache.chunk("a", 0, 5, NONE) is not None  # reading "a" makes "b" the oldest
    cache.add("d", rows(0, 5))
    assert cache.chunk("b", 0, 5, NONE) is None
    assert all(cache.chunk(name, 0, 5, NONE) == LineChunk(5, body(0, 5)) for name in ("a", "c", "d"))
    assert cache.size == 3 * per_session


def test_a_session_over_the_whole_budget_keeps_its_newest_lines() -> None:
    cache = TailCache(100 * (10 + 64))
    cache.add("other", rows(0, 10))
    cache.add("s1", rows(0, 120))
    assert cache.chunk("other", 0, 10, NONE) is None
    assert cache.size <= 75 * (10 + 64)
    assert cache.chunk("s1", 0, 120, NONE) is None  # the oldest lines are gone
    kept = cache.chunk("s1", 45, 120, NONE)
    assert kept == LineChunk(75, body(45, 75))
    assert cache.chunk("s1", 44, 120, NONE) is None


def test_no_budget_holds_nothing() -> None:
    cache = TailCache(0)
    cache.add("s1", rows(0, 3))
    assert cache.chunk("s1", 0, 3, NONE) is None and cache.size == 0
    assert cache.count("s1") is None


def test_it_counts_a_held_session_to_its_newest_line() -> None:
    cache = TailCache(3 * (10 + 64))
    assert cache.count("s1") is None
    cache.add("s1", rows(0, 2))
    assert cache.count("s1") == 2
    cache.add("s1", rows(2, 3))  # over the budget: the oldest lines go, the count stays
    assert cache.count("s1") == 5 and cache.chunk("s1", 0, 5, NONE) is None


async def test_the_store_streams_acknowledged_commits_without_a_database_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteStore(tmp_path)
    await store.open()
    try:
        await store.create_session(session("s1"))
        await store.commit("s1", Commit(events=events(0, b"a", b"b")))
        with pytest.raises(EventIndexConflict):
            await store.commit("s1", Commit(events=events(1, b"refused")))
        await store.commit("s1", Commit(events=events(2, b"c")))

        async def no_reads(*_args: Any) -> None:
            raise AssertionError("read the database")

        monkeypatch.setattr(store, "_read", no_reads)
        assert await store.read_chunk("s1", 0, 3) == LineChunk(3, b"a\nb\nc\n")
        monkeypatch.undo()
        store.tail_cache.clear()
        assert await store.read_chunk("s1", 0, 3) == LineChunk(3, b"a\nb\nc\n")  # the database agrees
    finally:
        await store.close()
    assert store.tail_cache.size == 0
    with pytest.raises(StoreError, match="closed"):
        await store.read_chunk("s1", 0, 3)


async def test_the_store_counts_events_from_the_cache_also_when_a_committer_was_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteStore(tmp_path)
    await store.open()
    try:
        await store.create_session(session("s1"))
        await store.commit("s1", Commit(events=events(0, b"a")))
        waiting = anyio.Event()

        async def commit_then_go_away() -> None:
            waiting.set()
            await store.commit("s1", Commit(events=events(1, b"b", b"c")))

        async with anyio.create_task_group() as group:
            group.start_soon(commit_then_go_away)
            await waiting.wait()
            group.cancel_scope.cancel()  # the caller is gone; its commit still lands
        assert await store.wait_for_events("s1", 1, 5.0) == 3

        def no_peeks(*_args: Any) -> None:
            raise AssertionError("read the database")

        monkeypatch.setattr(store, "_peek", no_peeks)
        assert await store.event_count("s1") == 3
        assert await store.read_chunk("s1", 1, 3) == LineChunk(2, b"b\nc\n")
        monkeypatch.undo()
        store.tail_cache.clear()
        assert await store.event_count("s1") == 3  # the database agrees
    finally:
        await store.close()


async def test_a_reopened_store_forgets_what_it_held(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    await store.open()
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(events=events(0, b"old")))
    await store.close()
    store.tail_cache.add("s1", events(0, b"old"))  # a commit that finished after the close
    for path in tmp_path.glob("eve.sqlite3*"):
        path.unlink()  # another database in the same place
    await store.open()
    try:
        assert await store.read_chunk("s1", 0, 1) == LineChunk(0, b"")
    finally:
        await store.close()
