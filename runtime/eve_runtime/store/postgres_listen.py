"""LISTEN/NOTIFY for the Postgres store: one connection that hears what other processes commit.

The store's commit function notifies the events channel (payload: the session id) in the
transaction that adds events, so Postgres delivers the notification when, and only when, the
commit is durable. Accepting a delivery notifies the deliveries channel the same way, so the
process that owns the session wakes it. The listener hands every notification to a callback on
the event loop; when its connection drops it reconnects (with a growing pause) and reports the
gap, so callers re-read what they wait for instead of missing a wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

import psycopg
from psycopg import sql

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

    async def start(self) -> None:
        """Connect and LISTEN (so nothing committed after this returns is missed), then listen on.

        Raises:
            StoreError: The first connection cannot be made.
        """
        self._conn = await self._listen()
        self._task = asyncio.create_task(self._run(), name="eve-postgres-listener")

    async def stop(self) -> None:
        """Stop listening and close the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()

    async def _listen(self) -> Connection:
        conn = await connect(self._url, self._configure)
        try:
            for channel in self._channels:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _run(self) -> None:
        pause = 0.1
        while True:
            conn = self._conn
            if conn is not None:
                try:
                    async for notify in conn.notifies():
                        self._on_notify(notify.channel, notify.payload)
                        pause = 0.1
                except psycopg.Error as exc:
                    logger.warning("lost the Postgres notification connection (%s); reconnecting", type(exc).__name__)
                with contextlib.suppress(Exception):
                    await conn.close()
                self._conn = None
            await asyncio.sleep(pause)
            pause = min(pause * 2, _MAX_PAUSE)
            try:
                self._conn = await self._listen()
            except Exception as exc:
                logger.warning("cannot reconnect to Postgres for notifications yet: %s", exc)
                continue
            self._on_gap()
