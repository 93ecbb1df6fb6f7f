"""LISTEN/NOTIFY for the Postgres store: one connection that hears what other processes commit.

The store's commit function notifies the events channel (payload: the session id) in the
transaction that adds events, so Postgres delivers the notification when, and only when, the
commit is durable. Accepting a delivery notifies the deliveries channel the same way, so the
process that owns the session wakes it. The listener hands every notification to a callback on
the event loop; when its connection drops it reconnects (with a growing pause) and reports the
gap, so callers re-read what they wait for instead of missing a wake-up.

Every process hears every notification of the schema, most of them for sessions it neither runs
nor reads (another worker's commits and deliveries), so hearing one must cost little: the
connection's socket stays registered with the event loop, and each time it is readable one
callback reads what arrived and hands out every notification in it (psycopg's `notifies()`
generator added and removed the reader, and resolved a future, for every wake-up: about 140 us
of CPU a notification against 40 here).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

import psycopg
from psycopg import sql
from psycopg.pq import ConnStatus

from eve_runtime.store.postgres_pool import Connection, connect

__all__ = ["Listener"]

logger = logging.getLogger(__name__)

_MAX_PAUSE = 5.0


class Listener:
    """Listens on `channels` and calls `on_notify(channel, payload)` for every notification.

    Args:
        url: The connection string.
        channels: The channel names to LISTEN on.
        on_notify: Called on the event loop for each notification.
        on_gap: Called after a reconnection (notifications may have been missed meanwhile).
        configure: Run on the listening connection after it opens.
    """

    def __init__(
        self,
        url: str,
        channels: Sequence[str],
        on_notify: Callable[[str, str], None],
        on_gap: Callable[[], None],
        configure: Callable[[Connection], Awaitable[None]] | None = None,
    ) -> None:
        self._url = url
        self._channels = tuple(channels)
        self._on_notify = on_notify
        self._on_gap = on_gap
        self._configure = configure
        self._task: asyncio.Task[None] | None = None
        self._conn: Connection | None = None
        self._fileno = -1
        self._encoding = "utf-8"

    async def start(self) -> None:
        """Connect and LISTEN (so nothing committed after this returns is missed), then listen on.

        Raises:
            StoreError: The first connection cannot be made.
        """
        self._watch(await self._listen())

    async def stop(self) -> None:
        """Stop listening and close the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        conn = self._unwatch()
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()

    async def _listen(self) -> Connection:
        conn = await connect(self._url, self._configure)
        try:
            # Notifications that arrive with the replies to LISTEN are read by psycopg: handed on here.
            conn.add_notify_handler(self._handed)
            for channel in self._channels:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            conn.remove_notify_handler(self._handed)
        except BaseException:
            await conn.close()
            raise
        return conn

    def _handed(self, notify: psycopg.Notify) -> None:
        self._on_notify(notify.channel, notify.payload)

    def _watch(self, conn: Connection) -> None:
        self._conn = conn
        self._fileno = conn.pgconn.socket
        self._encoding = conn.info.encoding
        asyncio.get_running_loop().add_reader(self._fileno, self._readable)
        self._readable()  # anything that arrived after the last LISTEN's reply

    def _unwatch(self) -> Connection | None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._fileno)
        return conn

    def _readable(self) -> None:
        conn = self._conn
        if conn is None:
            return
        pgconn = conn.pgconn
        try:
            pgconn.consume_input()
            if pgconn.status != ConnStatus.OK:
                raise psycopg.OperationalError("the connection is closed")
        except psycopg.Error as exc:
            logger.warning("lost the Postgres notification connection (%s); reconnecting", type(exc).__name__)
            self._unwatch()
            self._task = asyncio.create_task(self._reconnect(conn), name="eve-postgres-listener")
            return
        encoding = self._encoding
        while (notify := pgconn.notifies()) is not None:
            self._on_notify(notify.relname.decode(encoding), notify.extra.decode(encoding))

    async def _reconnect(self, lost: Connection) -> None:
        with contextlib.suppress(Exception):
            await lost.close()
        pause = 0.1
        while True:
            await asyncio.sleep(pause)
            pause = min(pause * 2, _MAX_PAUSE)
            try:
                conn = await self._listen()
            except Exception as exc:
                logger.warning("cannot reconnect to Postgres for notifications yet: %s", exc)
                continue
            self._task = None
            self._on_gap()
            self._watch(conn)
            return
