"""A small pool of async Postgres connections, and what a connection string may show in a log.

The pool hands out autocommit connections (a caller that needs a transaction opens one with
`conn.transaction()`), opens them lazily up to `size`, and drops a connection that comes back
broken or in the middle of a transaction (a cancelled caller), so the next caller gets a clean one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import psycopg
from psycopg import conninfo as pg_conninfo

from eve_runtime.store.base import StoreError

__all__ = ["Connection", "ConnectionPool", "connect", "describe_url", "scrub"]

Connection = psycopg.AsyncConnection[tuple[Any, ...]]

_CONNECT_TIMEOUT = 10


def describe_url(url: str) -> str:
    """Where a connection string points, without its password: `user@host:port/dbname`.

    Never raises: a URL that cannot be parsed is described as such.
    """
    try:
        params = pg_conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "(an unparsable connection string)"
    host = str(params.get("host") or "localhost")
    port = str(params.get("port") or "5432")
    user = str(params.get("user") or "")
    dbname = str(params.get("dbname") or user or "")
    return f"{user + '@' if user else ''}{host}:{port}/{dbname}"


def scrub(message: str, url: str) -> str:
    """`message` without the password of `url` (psycopg's messages do not carry it, but be sure)."""
    try:
        password = str(pg_conninfo.conninfo_to_dict(url).get("password") or "")
    except psycopg.Error:
        return message.replace(url, "<database url>")
    message = message.replace(url, "<database url>")
    return message.replace(password, "***") if password else message


async def connect(url: str, configure: Callable[[Connection], Awaitable[None]] | None = None) -> Connection:
    """Open one autocommit connection (and run `configure` on it).

    Raises:
        StoreError: The connection cannot be made; the message names the server, never the password.
    """
    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        detail = scrub(str(exc).strip(), url)
        raise StoreError(f"Cannot connect to Postgres at {describe_url(url)}: {detail}") from None
    try:
        if configure is not None:
            await configure(conn)
    except BaseException:
        await conn.close()
        raise
    return conn


class ConnectionPool:
    """Up to `size` connections to one database, opened on demand and reused.

    Args:
        url: The connection string.
        size: The most connections open at once.
        configure: Run on every new connection (sets the search path).
    """

    def __init__(self, url: str, size: int, configure: Callable[[Connection], Awaitable[None]] | None = None) -> None:
        self._url = url
        self._size = size
        self._configure = configure
        self._idle: list[Connection] = []
        self._open = 0
        self._available = asyncio.Condition()
        self._closed = False

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """Borrow a connection for the duration of the block.

        Raises:
            StoreError: The pool is closed, or a new connection cannot be made.
        """
        conn = await self._take()
        try:
            yield conn
        finally:
            await self._give_back(conn)

    async def _take(self) -> Connection:
        async with self._available:
            while True:
                if self._closed:
                    raise StoreError("The Postgres store is closed: call open() first.")
                if self._idle:
                    return self._idle.pop()
                if self._open < self._size:
                    self._open += 1
                    break
                await self._available.wait()
        try:
            return await connect(self._url, self._configure)
        except BaseException:
            async with self._available:
                self._open -= 1
                self._available.notify()
            raise

    async def _give_back(self, conn: Connection) -> None:
        clean = not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        async with self._available:
            if clean and not self._closed:
                self._idle.append(conn)
            else:
                self._open -= 1
            self._available.notify()
        if not clean or self._closed:
            with contextlib.suppress(Exception):
                await conn.close()

    async def close(self) -> None:
        """Close the idle connections; borrowed ones close when they come back."""
        async with self._available:
            self._closed = True
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._available.notify_all()
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.close()
