"""The SQLite store's read of a stream chunk: consecutive events' lines joined by SQLite itself.

A row-by-row fetch takes the GIL back for every row, and on a busy event loop each of those waits
queues behind the loop's work; here the whole chunk is one `sqlite3_step` with the GIL released,
and one `bytes` value comes back.
"""

from __future__ import annotations

import sqlite3

from eve_runtime.store.base import LineChunk

__all__ = ["read_chunk"]

_CHUNK = (
    # An ordered subquery is not flattened into an aggregate: group_concat meets the lines in index
    # order (SQLite 3.44's group_concat(... ORDER BY) says the same in one clause).
    "SELECT count(*), CAST(group_concat(line || x'0a', '') AS BLOB) FROM"
    " (SELECT line FROM events WHERE session_id = ? AND idx >= ? AND idx < ? ORDER BY idx)"
)


def read_chunk(
    conn: sqlite3.Connection, session_id: str, start: int, end: int, stop_after: frozenset[str]
) -> LineChunk:
    """The lines of the events with `start <= index < end` as one chunk (see `Store.read_chunk`)."""
    stop = None
    if stop_after and end > start:
        marks = ", ".join("?" * len(stop_after))
        stop = conn.execute(
            f"SELECT min(idx) FROM events WHERE session_id = ? AND idx >= ? AND idx < ? AND type IN ({marks})",
            (session_id, start, end, *sorted(stop_after)),
        ).fetchone()[0]
        end = end if stop is None else stop + 1
    while True:
        try:
            count, body = conn.execute(_CHUNK, (session_id, start, end)).fetchone()
        except sqlite3.DataError as exc:  # over SQLITE_LIMIT_LENGTH: a smaller chunk (one line always fits)
            if exc.sqlite_errorname != "SQLITE_TOOBIG" or end - start <= 1:
                raise
            end = start + (end - start) // 2
            continue
        return LineChunk(count, body or b"", stopped=count > 0 and start + count - 1 == stop)
