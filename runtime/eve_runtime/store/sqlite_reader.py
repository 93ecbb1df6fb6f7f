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
import concurrent.futures
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from eve_runtime.store.base import StoreError
from eve_runtime.store.sqlite_writer import as_store_error

__all__ = ["MAX_BATCH", "SqliteReader"]

T = TypeVar("T")

MAX_BATCH = 256
"""The most reads answered in one hand-over to the loop (bounds how long the first one waits)."""

logger = logging.getLogger(__name__)

_Read = tuple[Callable[[sqlite3.Connection], Any], "asyncio.Future[Any]"]


class SqliteReader:
    """The thread that owns the read connection and answers reads in batches.

    Args:
        connect: Opens the read connection; runs on the thread.
        loop: The event loop whose futures the thread resolves.
    """

    def __init__(self, connect: Callable[[], sqlite3.Connection], loop: asyncio.AbstractEventLoop) -> None:
        self._connect = connect
        self._loop = loop
        self._queue: queue.SimpleQueue[_Read | None] = queue.SimpleQueue()
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, name="eve-sqlite-reader", daemon=True)
        self._stopping = False

    async def start(self) -> None:
        """Start the thread and wait until its connection is open.

        Raises:
            StoreError: The database cannot be opened.
        """
        self._thread.start()
        try:
            await asyncio.wrap_future(self._ready)
        except BaseException:
            await asyncio.to_thread(self._thread.join)
            raise

    async def submit(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on the reader thread; its result (or its error, as a store error)."""
        if self._stopping:
            raise StoreError("The SQLite store is closed: call open() first.")
        future: asyncio.Future[T] = self._loop.create_future()
        self._queue.put((fn, future))
        return await future

    async def stop(self) -> None:
        """Answer the queued reads, close the connection and end the thread."""
        if self._stopping:
            return
        self._stopping = True
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    # -- on the reader thread ------------------------------------------------------------------

    def _run(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:
            self._ready.set_exception(exc)
            return
        self._ready.set_result(None)
        try:
            stop = False
            while not stop:
                first = self._queue.get()
                if first is None:
                    break
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        read = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if read is None:
                        stop = True
                        break
                    batch.append(read)
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
                first = read = None  # drop the finished reads (and what they returned) before blocking
                batch, answers = [], []
        finally:
            conn.close()


def _resolve(answers: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for future, value, error in answers:
        if future.cancelled():
            continue
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)
