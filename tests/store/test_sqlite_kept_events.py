"""Recovery's read of a turn's events without its streamed deltas goes through the partial index `events_kept`."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from eve_runtime.events.catalog import DELTA_FIELDS
from eve_runtime.store import Commit, EventRow, open_local_store
from eve_runtime.store.sqlite_ops import read_events
from eve_runtime.store.sqlite_schema import SCHEMA_VERSION, STREAMED_TYPES
from tests.store.conftest import delivery, session

pytestmark = pytest.mark.anyio

TYPES = ["turn.started", "step.started", "message.appended", "message.appended", "reasoning.appended"]
TYPES += ["action.input.appended", "message.completed", "message.appended", "step.completed"]


def _rows(start: int) -> list[EventRow]:
    return [EventRow(start + n, kind, f'{{"n":{start + n}}}'.encode()) for n, kind in enumerate(TYPES)]


def test_the_store_knows_the_catalogues_delta_types() -> None:
    assert sorted(STREAMED_TYPES) == sorted(DELTA_FIELDS)


async def test_a_read_without_deltas_returns_the_other_events_in_order(tmp_path: Path) -> None:
    store = await open_local_store(tmp_path / "data")
    try:
        await store.create_session(session("s1"), delivery("d1"))
        await store.create_session(session("s2"), delivery("d2"))
        await store.commit("s1", Commit(events=_rows(0)))
        await store.commit("s2", Commit(events=_rows(0)))  # interleaved with another session's rows
        await store.commit("s1", Commit(events=_rows(len(TYPES))))
        every = await store.read_events("s1")
        kept = await store.read_events("s1", 3, skip=DELTA_FIELDS)
        assert kept == [row for row in every if row.index >= 3 and row.type not in DELTA_FIELDS]
        assert [row.type for row in kept][:3] == ["message.completed", "step.completed", "turn.started"]
        assert await store.read_events("s1", 3, 9, skip=DELTA_FIELDS) == [r for r in kept if r.index < 9]
        assert await store.read_events("s1", skip={"message.appended"}) == [
            row for row in every if row.type != "message.appended"
        ]
    finally:
        await store.close()


async def test_the_read_uses_the_partial_index(tmp_path: Path) -> None:
    store = await open_local_store(tmp_path / "data")
    await store.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "eve.sqlite3")) as raw:
        statements: list[str] = []
        raw.set_trace_callback(statements.append)
        read_events(raw, "s1", 0, None, tuple(DELTA_FIELDS))
        raw.set_trace_callback(None)
        plan = " ".join(str(row) for row in raw.execute("EXPLAIN QUERY PLAN " + statements[-1]).fetchall())
    assert "events_kept" in plan, plan


async def test_a_schema_5_database_gains_the_index(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    store = await open_local_store(directory)
    await store.create_session(session("s1"), delivery("d1"))
    await store.commit("s1", Commit(events=_rows(0)))
    await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        raw.execute("DROP INDEX events_kept")
        raw.execute("PRAGMA user_version = 5")
    store = await open_local_store(directory)
    try:
        assert [row.index for row in await store.read_events("s1", skip=DELTA_FIELDS)] == [0, 1, 6, 8]
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(directory / "eve.sqlite3")) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
        names = [row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")]
        assert "events_kept" in names
