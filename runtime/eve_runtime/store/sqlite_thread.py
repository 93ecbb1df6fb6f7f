"""A thread that owns one SQLite connection and works through a queue in batches.

The SQLite store's writer and reader share this lifecycle: `start` opens the connection on the
thread and waits for it; the thread takes the first queued item, then whatever else queued up
meanwhile (up to `max_batch`), and hands the batch to `_handle`; `stop` lets it finish what is
queued, closes the connection and joins the thread. Items are submitted from the event loop,
whose futures `_handle` resolves (through `loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from eve_runtime.store.base import StoreError

__all__ = ["ConnectionThread"]

Item = TypeVar("Item")


class ConnectionThread(Generic[Item]):
    """See the module docstring. Subclasses implement `_handle` (and may `_prepare` the connection).

    Args:
        connect: Opens the connection; runs on the thread.
        loop: The event loop whose futures the thread resolves.
        name: The thread's name.
        max_batch: The most items handed to `_handle` at once.
    """

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], loop: asyncio.AbstractEventLoop, name: str, max_batch: int
    ) -> None:
        self._connect = connect
        self._loop = loop
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Item | None] = queue.SimpleQueue()
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
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

    async def stop(self) -> None:
        """Finish what is queued, close the connection and end the thread."""
        if self._stopping:
            return
        self._stopping = True
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    def _put(self, item: Item) -> None:
        if self._stopping:
            raise StoreError("The SQLite store is closed: call open() first.")
        self._queue.put(item)

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Set the connection up on the thread, once opened (nothing by default)."""

    def _handle(self, conn: sqlite3.Connection, batch: list[Item]) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:
            self._ready.set_exception(exc)
            return
        self._prepare(conn)
        self._ready.set_result(None)
        try:
            stop = False
            while not stop:
                first = self._queue.get()
                if first is None:
                    break
                batch = [first]
                while len(batch) < self._max_batch:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        stop = True
                        break
                    batch.append(item)
                self._handle(conn, batch)
                # Drop the finished items (and what they hold) before blocking on the queue.
                first = item = None
                batch = []
        finally:
            conn.close()
