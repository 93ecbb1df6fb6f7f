"""The Postgres store's connections: psycopg's own pool, and retries over a connection the server dropped.

The pool ([`psycopg_pool.AsyncConnectionPool`][]) hands out autocommit connections and discards
one that comes back broken. The store keeps the healthy idle ones it borrowed for its next
operations (for up to `KEEP_SECONDS`, and not while a caller waits for the pool): a checkout from
psycopg's pool costs as much CPU as the statement's own client side.
[`Pool.run`][eve_runtime.store.postgres_pool.Pool.run] checks each connection it borrows first,
with a round trip (the pool's own `check_connection`) only when the server sent it something
while it sat idle (as it does when it closes one): one the server closed is dropped, with every
other idle one cut at the same time, and the operation takes another (psycopg's check at checkout
pauses a second and more between dead connections; this one does not). A connection can still be
lost *while* a statement runs (`pg_terminate_backend`, a failover): the operation then runs again
on a new connection when that is safe:

- a **read** is always safe to run again;
- a **write in a transaction** (opened with [`transaction`][eve_runtime.store.postgres_pool.transaction])
  is safe unless the connection was lost during its COMMIT, when it may have committed;
- an **idempotent** write (a lease renewal, a keyed enqueue) is safe by its nature.

Anything else, and a connection lost on every attempt, is
[`StoreUnavailable`][eve_runtime.store.base.StoreUnavailable]: the caller was told nothing was
stored when nothing may have been, so it answers 503 and the client retries.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import select
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, TypeVar

import psycopg
from psycopg import conninfo as pg_conninfo
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from eve_runtime.store.base import StoreError, StoreUnavailable

__all__ = [
    "ATTEMPTS",
    "Connection",
    "Cursor",
    "Pool",
    "Safety",
    "connect",
    "describe_url",
    "execute",
    "named",
    "scrub",
    "transaction",
]

T = TypeVar("T")

Connection = psycopg.AsyncConnection[tuple[Any, ...]]
Cursor = psycopg.AsyncCursor[tuple[Any, ...]]

Safety = Literal["read", "transaction", "idempotent", "once"]
"""May an operation whose connection was lost run again: see the module docstring (`once`: never)."""

ATTEMPTS = 3
"""Tries of one operation whose connection keeps being lost."""

_CONNECT_TIMEOUT = 10
_POOL_TIMEOUT = 5.0
"""Seconds a caller waits for a connection before the store counts as unavailable."""

_RECONNECT_WINDOW = 5.0

KEEP_SECONDS = 30.0
"""How long the store keeps a connection it borrowed from psycopg's pool before it returns it there."""

logger = logging.getLogger(__name__)

_CURSORS: weakref.WeakKeyDictionary[Connection, Cursor] = weakref.WeakKeyDictionary()


async def execute(conn: Connection, query: str, params: Any = None) -> Cursor:
    """`conn.execute` on the connection's one kept cursor: its results last until the next `execute` here.

    A new cursor (what `conn.execute` makes) finds the dumpers of its parameters' types afresh:
    about 80 us of CPU more for a commit's 14 parameters than a cursor that knows them.
    """
    cursor = _CURSORS.get(conn)
    if cursor is None or cursor.closed:
        cursor = _CURSORS[conn] = conn.cursor()
    await cursor.execute(query, params)
    return cursor


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


def named(url: str, application_name: str) -> str:
    """`url` with `application_name` set, unless it sets one (or cannot be parsed: `open` says so)."""
    try:
        if "application_name" in pg_conninfo.conninfo_to_dict(url):
            return url
        return pg_conninfo.make_conninfo(url, application_name=application_name)
    except psycopg.Error:
        return url


async def connect(url: str, configure: Callable[[Connection], Awaitable[None]] | None = None) -> Connection:
    """Open one autocommit connection outside the pool (and run `configure` on it).

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


class _Attempt:
    """One try of an operation: whether its transaction had reached COMMIT."""

    __slots__ = ("committing", "started")

    def __init__(self) -> None:
        self.committing = False
        self.started = False


_ATTEMPT: contextvars.ContextVar[_Attempt | None] = contextvars.ContextVar("eve_pg_attempt", default=None)


@contextlib.asynccontextmanager
async def transaction(conn: Connection) -> AsyncIterator[None]:
    """`conn.transaction()`, marking the try as committing once the block finished (COMMIT follows)."""
    async with conn.transaction():
        yield
        attempt = _ATTEMPT.get()
        if attempt is not None:
            attempt.committing = True


def lost(conn: Connection, exc: BaseException) -> bool:
    """Whether `exc` means the connection is gone (closed by the server, a broken socket)."""
    return isinstance(exc, psycopg.OperationalError) and (conn.closed or conn.broken)


def may_be_cut(conn: Connection) -> bool:
    """Whether an idle connection may have been cut (the server sent it something, or psycopg saw it break).

    An idle connection is sent nothing unasked but the server's last words before it closes it, or
    the end of the stream. A connection the server closed shows so at once; one lost without a word (a network cut) is
    found by the statement itself, and the operation runs again as its safety allows.
    """
    if conn.closed or conn.broken:
        return True
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable)


class Pool:
    """Up to `size` connections to one database (psycopg's pool), and operations retried over lost ones.

    Args:
        url: The connection string.
        size: The most connections open at once.
        configure: Run on every new connection (sets the search path).
        timeout: Seconds a caller waits for a connection before the store counts as unavailable.
    """

    def __init__(
        self,
        url: str,
        size: int,
        configure: Callable[[Connection], Awaitable[None]] | None = None,
        *,
        timeout: float = _POOL_TIMEOUT,
    ) -> None:
        self._url = url
        self._size = max(1, size)
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=self._size,
            kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT},
            configure=configure,
            timeout=timeout,
            # psycopg's pool retries a failed connect with a doubling pause and gives up after this, so
            # the next caller starts afresh: a database back after an outage is used within seconds.
            reconnect_timeout=_RECONNECT_WINDOW,
            open=False,
            name="eve",
        )
        self._kept: list[Connection] = []
        """Connections borrowed from the pool and kept between operations (the last used last)."""
        self._borrowed_at: dict[int, float] = {}
        """When each connection this store holds was borrowed from psycopg's pool (monotonic), by `id`."""
        self._borrowing = 0
        """Callers waiting for psycopg's pool: a connection coming back then goes to the pool, for them."""
        self.retries = 0
        """Operations run again after their connection was lost (informational)."""

    async def open(self) -> None:
        """Open the pool and wait for its first connection.

        Raises:
            StoreUnavailable: No connection could be made in time.
        """
        try:
            await self._pool.open(wait=True, timeout=self._timeout)
        except PoolTimeout as exc:
            await self._pool.close()
            raise StoreUnavailable(f"Cannot connect to Postgres at {describe_url(self._url)}: {exc}") from None

    async def close(self) -> None:
        """Close every connection (borrowed ones as they come back)."""
        await self._return_kept()
        await self._pool.close()

    async def check(self) -> None:
        """Drop the idle connections the server closed (after one was found cut: others likely were too)."""
        await self._return_kept()
        await self._pool.check()

    async def _borrow(self) -> Connection:
        """A kept connection (the most recently used), else one from psycopg's pool."""
        if self._kept:
            return self._kept.pop()
        self._borrowing += 1
        try:
            conn = await self._pool.getconn()
        finally:
            self._borrowing -= 1
        self._borrowed_at[id(conn)] = time.monotonic()
        return conn

    async def _give_back(self, conn: Connection) -> None:
        """Keep a healthy idle connection for the next operation; else (or when someone waits) return it to the pool.

        psycopg's checkout and return cost about 100 us of CPU an operation here (its locks, its
        statistics, its reset checks), as much as the statement's own client side. A connection
        goes back to the pool after `KEEP_SECONDS`, so the pool's own lifetime rules still apply.
        """
        since = self._borrowed_at.get(id(conn), 0.0)
        keep = (
            not self._borrowing
            and not self._pool.closed
            and not conn.closed
            and not conn.broken
            and conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
            and time.monotonic() - since < KEEP_SECONDS
        )
        if keep:
            self._kept.append(conn)
            return
        self._borrowed_at.pop(id(conn), None)
        await self._pool.putconn(conn)

    async def _return_kept(self) -> None:
        kept, self._kept = self._kept, []
        for conn in kept:
            self._borrowed_at.pop(id(conn), None)
            await self._pool.putconn(conn)

    async def run(self, fn: Callable[[Connection], Awaitable[T]], safety: Safety) -> T:
        """`fn` on a pooled connection; run again on a new one when its connection was lost and `safety` allows.

        Raises:
            StoreUnavailable: No connection could be had, or it was lost where running again is not safe.
            psycopg.Error: Any other failure of the statement (the caller translates it).
        """
        number = stale = 0
        while number < ATTEMPTS:
            attempt = _Attempt()
            token = _ATTEMPT.set(attempt)
            try:
                conn = await self._borrow()
                try:
                    try:
                        if may_be_cut(conn):  # a round trip only then: most operations are one statement
                            await AsyncConnectionPool.check_connection(conn)
                    except psycopg.Error as exc:  # cut while idle: nothing of `fn` was sent
                        failure = exc
                    else:
                        attempt.started = True
                        try:
                            return await fn(conn)
                        except psycopg.Error as exc:
                            if not lost(conn, exc):
                                raise
                            failure = exc
                            number += 1
                            if number == 1:
                                await self.check()  # the idle ones were likely cut at the same time
                finally:
                    await self._give_back(conn)
            except PoolTimeout as exc:
                raise StoreUnavailable(f"Postgres at {describe_url(self._url)} is unreachable: {exc}") from None
            finally:
                _ATTEMPT.reset(token)
            if not attempt.started:
                stale += 1
                if stale == 1:
                    await self.check()  # drop the other idle connections cut at the same time
                if stale <= self._size + 1:
                    continue
                raise StoreUnavailable(
                    f"Every connection to Postgres at {describe_url(self._url)} was closed by the server."
                ) from failure
            detail = scrub(str(failure).strip().splitlines()[0] if str(failure).strip() else "", self._url)
            if safety == "once" or (safety == "transaction" and attempt.committing):
                raise StoreUnavailable(
                    f"Lost the connection to Postgres at {describe_url(self._url)} while the change may have been "
                    f"committing ({detail}); retry it."
                ) from failure
            if number < ATTEMPTS:
                self.retries += 1
                logger.info("lost a Postgres connection (%s); running the operation again on a new one", detail)
        raise StoreUnavailable(
            f"Lost the connection to Postgres at {describe_url(self._url)} {ATTEMPTS} times in a row ({detail})."
        ) from failure
