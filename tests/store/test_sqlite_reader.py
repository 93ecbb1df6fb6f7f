"""The SQLite store's reader thread answers the reads queued together in one batch (`SqliteReader`)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from eve_runtime.store.base import StoreError
from eve_runtime.store.sqlite_reader import MAX_BATCH, SqliteReader

pytestmark = pytest.mark.anyio


async def _reader(path: Path) -> SqliteReader:
    reader = SqliteReader(lambda: sqlite3.connect(path, check_same_thread=False), asyncio.get_running_loop())
    await reader.start()
    return reader


async def test_many_reads_at_once_each_get_their_own_answer(tmp_path: Path) -> None:
    reader = await _reader(tmp_path / "db.sqlite3")
    try:
        count = MAX_BATCH * 2 + 7  # more than two batches' worth

        def select(n: int) -> Callable[[sqlite3.Connection], int]:
            return lambda conn: int(conn.execute("SELECT ?", (n,)).fetchone()[0])

        answers = await asyncio.gather(*(reader.submit(select(n)) for n in range(count)))
        assert answers == list(range(count))
    finally:
        await reader.stop()


async def test_a_failing_read_fails_alone_as_a_store_error(tmp_path: Path) -> None:
    reader = await _reader(tmp_path / "db.sqlite3")
    try:
        good = reader.submit(lambda conn: conn.execute("SELECT 1").fetchone()[0])
        bad = reader.submit(lambda conn: conn.execute("SELECT * FROM missing").fetchone())
        after = reader.submit(lambda conn: conn.execute("SELECT 2").fetchone()[0])
        outcomes = await asyncio.gather(good, bad, after, return_exceptions=True)
        assert outcomes[0] == 1 and outcomes[2] == 2
        assert isinstance(outcomes[1], StoreError) and isinstance(outcomes[1].__cause__, sqlite3.OperationalError)
    finally:
        await reader.stop()


async def test_reads_after_stop_are_refused(tmp_path: Path) -> None:
    reader = await _reader(tmp_path / "db.sqlite3")
    await reader.stop()
    with pytest.raises(StoreError, match="closed"):
        await reader.submit(lambda conn: 1)


async def test_a_database_that_cannot_be_opened_fails_start(tmp_path: Path) -> None:
    def refuse() -> sqlite3.Connection:
        raise StoreError("cannot open")

    reader = SqliteReader(refuse, asyncio.get_running_loop())
    with pytest.raises(StoreError, match="cannot open"):
        await reader.start()
