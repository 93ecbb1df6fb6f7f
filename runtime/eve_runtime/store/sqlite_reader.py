"""The SQLite store's reader thread: one read connection, one queue, reads answered in batches.

Every read is a function of the read connection, submitted from the event loop. The thread takes
the first queued read, then every other read queued meanwhile (up to `MAX_BATCH`), runs them one
after the other and hands all their results back to the loop in one callback. A thousand
sessions loading at once (a restart's recovery) then cost a few dozen wake-ups of the loop and
hand-overs of the GIL between the two threads instead of one of each per read: under load each
hand-over can wait out the interpreter's switch interval.

Reads see only committed transactions (WAL); a read that raises fails alone, as the store error
it means.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from eve_runtime.store.sqlite_jobs import as_store_error
from eve_runtime.store.sqlite_thread import ConnectionThread

__all__ = ["MAX_BATCH", "SqliteReader"]

T = TypeVar("T")

MAX_BATCH = 256
"""The most reads answered in one hand-over to the loop (bounds how long the first one waits)."""

logger = logging.getLogger(__name__)

_Read = tuple[Callable[[sqlite3.Connection], Any], "asyncio.Future[Any]"]


class SqliteReader(ConnectionThread[_Read]):
    """The thread that owns the read connection and answers reads in batches.

    Args:
        connect: Opens the read connection; runs on the thread.
        loop: The event loop whose futures the thread resolves.
    """

    def __init__(self, connect: Callable[[], sqlite3.Connection], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(connect, loop, "eve-sqlite-reader", MAX_BATCH)

    async def submit(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on the reader thread; its result (or its error, as a store error)."""
        future: asyncio.Future[T] = self._loop.create_future()
        self._put((fn, future))
        return await future

    def _handle(self, conn: sqlite3.Connection, batch: list[_Read]) -> None:
        answers: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        for fn, future in batch:
            try:
                answers.append((future, fn(conn), None))
            except Exception as exc:
                answers.append((future, None, as_store_error(exc)))
        try:
            self._loop.call_soon_threadsafe(_resolve, answers)
        except RuntimeError:  # the loop is closed: nobody waits for these results any more
            logger.debug("event loop closed; dropping %d store reads", len(answers))


def _resolve(answers: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for future, value, error in answers:
        if future.cancelled():
            continue
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)
