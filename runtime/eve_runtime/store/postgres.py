"""The Postgres store: the scale-out world, one database shared by any number of eve processes.

The tables are the SQLite store's (see `postgres_schema.py`), kept in one Postgres schema: the
connection string's default (`public`, or the first entry of `?options=-csearch_path=...`), or the
one given to the store (created when missing). Every write is one transaction; a commit is one
call of the `eve_commit` function, which enforces the fencing token in SQL. Reads and writes go
through psycopg's connection pool; an operation whose connection the server dropped runs again on
a new one where that is safe (`postgres_pool.py`), else fails with `StoreUnavailable`. One more
connection LISTENs: `wait_for_events` wakes when any process commits events (at once when this
one does), and `watched` hears of the readers of every process (`postgres_watch.py`).

A delivery is announced to the other processes (the lease holder runs it) unless this one holds
the session's lease (acquired here, half its time left): every process hears every notification.
"""

from __future__ import annotations

import functools
import itertools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar

import psycopg

from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.store import postgres_commit as commits, postgres_ops as ops
from eve_runtime.store.backend_common import EventWaiters
from eve_runtime.store.base import (
    Commit,
    DeliveryRecord,
    EnqueueResult,
    EventRow,
    LineChunk,
    NewDelivery,
    ScheduleClaim,
    SessionRecord,
    SessionStatus,
    Store,
    StoreError,
    StoreUnavailable,
)
from eve_runtime.store.postgres_listen import Listener
from eve_runtime.store.postgres_pool import Connection, Pool, Safety, connect, describe_url, named, scrub, transaction
from eve_runtime.store.postgres_schema import channel_names, decode, prepare_schema, use_schema
from eve_runtime.store.postgres_watch import Watches
from eve_runtime.store.rows import delivery_from_row, session_from_row

__all__ = ["DEFAULT_POOL_SIZE", "PostgresStore"]

T = TypeVar("T")

DEFAULT_POOL_SIZE = 8

logger = logging.getLogger(__name__)


class PostgresStore(Store):
    """The store of the Postgres world.

    Args:
        url: A libpq connection string or `postgresql://` URL (it may hold a password: eve never
            logs it).
        schema: The Postgres schema holding eve's tables (created when missing); None for the
            connection's default schema.
        pool_size: The most connections this store opens for reads and writes (one more listens).
        application_name: How its connections show in `pg_stat_activity` (unless the URL names one).
        pool_timeout: Seconds an operation waits for a connection before the store counts as unavailable.
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        application_name: str = "eve",
        pool_timeout: float = 5.0,
    ) -> None:
        self._url = named(url, application_name)
        self._schema = schema
        self._pool_size = pool_size
        self._pool_timeout = pool_timeout
        self._pool: Pool | None = None
        self._listener: Listener | None = None
        self._waiters = EventWaiters()
        self._watches = Watches(self._announce_watch)
        self._delivery_callbacks: list[Callable[[str], None]] = []
        self._database = ""
        self._inbox_locks = KeyedLocks()
        self._tag = uuid.uuid4().hex[:16]  # marks its delivery notifications: it tells only of others'
        self._held: dict[str, tuple[str, float]] = {}
        """Sessions whose lease an owner acquired here: the owner, and until when (monotonic) it surely holds."""
        self.schema: str | None = None  # the schema in use, known once open
        self.events_channel = self.deliveries_channel = self.watch_channel = ""

    @property
    def where(self) -> str:
        """Where the store is, for messages and logs: `user@host:port/dbname`, never the password."""
        return describe_url(self._url)

    @property
    def _announce(self) -> tuple[str, str]:
        return self.deliveries_channel, self._tag

    def _delivery_notice(self, session_id: str) -> tuple[str, str] | None:
        """How to announce a delivery for the session: not at all while this process holds its lease."""
        held = self._held.get(session_id)
        if held is not None:
            if time.monotonic() < held[1]:
                return None
            del self._held[session_id]
        return self._announce

    def on_delivery(self, callback: Callable[[str], None]) -> None:
        """Call `callback(session_id)` when another process accepts a delivery of a session it does not hold."""
        self._delivery_callbacks.append(callback)

    async def open(self) -> None:
        """Connect, create the schema when new, and start listening for notifications.

        Raises:
            StoreError: Postgres cannot be reached, the schema does not exist (and none was given to
                create), or it was written by a newer eve.
        """
        if self._pool is not None:
            return
        first = await connect(self._url)
        try:
            self._database, schema = await prepare_schema(first, self._schema, self.where)
        except psycopg.Error as exc:
            raise StoreError(f"Cannot prepare the eve store in Postgres at {self.where}: {self._scrub(exc)}") from None
        finally:
            await first.close()
        self.schema = self._schema = schema
        self.events_channel, self.deliveries_channel, self.watch_channel = channel_names(self._database, schema)
        pool = Pool(self._url, self._pool_size, self._configure, timeout=self._pool_timeout)
        await pool.open()
        self._pool = pool
        channels = (self.events_channel, self.deliveries_channel, self.watch_channel)
        listener = Listener(self._url, channels, self._notified, self._gap, self._configure)
        try:
            await listener.start()
        except BaseException:
            await self._pool.close()
            self._pool = None
            raise
        self._listener = listener
        self._watches.listening()
        logger.info("opened the eve store in Postgres at %s (schema %s)", self.where, schema)

    async def _configure(self, conn: Connection) -> None:
        assert self._schema is not None
        commits.register_arrays(conn)
        await use_schema(conn, self._schema)

    async def close(self) -> None:
        """Stop listening and close every connection; the store can be opened again."""
        listener, self._listener = self._listener, None
        pool, self._pool = self._pool, None
        if listener is not None:
            await listener.stop()
        await self._watches.close()
        if pool is not None:
            await pool.close()

    def _notified(self, channel: str, payload: str) -> None:
        if channel == self.events_channel:
            self._waiters.notify((payload,))
        elif channel == self.deliveries_channel:
            tag, _, session_id = payload.partition(" ")
            if tag != self._tag:
                for callback in self._delivery_callbacks:
                    callback(session_id)
        elif channel == self.watch_channel:
            self._watches.heard(payload)

    def _gap(self) -> None:
        self._watches.gap()
        self._waiters.notify_all()

    async def _announce_watch(self, session_id: str) -> None:
        await self._run(lambda conn: conn.execute("SELECT pg_notify(%s, %s)", (self.watch_channel, session_id)), "read")

    def _scrub(self, exc: BaseException) -> str:
        return scrub(str(exc).strip(), self._url)

    @property
    def retries(self) -> int:
        """Operations run again after the server dropped their connection (informational)."""
        return 0 if self._pool is None else self._pool.retries

    async def health(self) -> str | None:
        """None when a pooled connection answers; else why not."""
        try:
            await self._rows("SELECT 1")
        except StoreError as exc:
            return str(exc)
        return None

    async def _run(self, fn: Callable[[Connection], Awaitable[T]], safety: Safety = "transaction") -> T:
        if self._pool is None:
            raise StoreError(f"The eve store in Postgres at {self.where} is closed: call open() first.")
        try:
            return await self._pool.run(fn, safety)
        except psycopg.OperationalError as exc:  # the server cannot do it now (its disk, a shutdown, ...)
            raise StoreUnavailable(f"Postgres failed: {self._scrub(exc)}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"Postgres failed: {self._scrub(exc)}") from exc

    async def _rows(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        return await self._run(lambda conn: ops.fetch_all(conn, query, params), "read")

    # -- sessions ---------------------------------------------------------------------------

    async def create_session(
        self, record: SessionRecord, first: NewDelivery | None = None
    ) -> tuple[SessionRecord, bool]:
        return await self._run(lambda conn: ops.create_session(conn, record, first, self._announce))

    async def get_session(self, session_id: str) -> SessionRecord | None:
        return await self._run(lambda conn: ops.get_session(conn, session_id), "read")

    async def list_sessions(self, status: SessionStatus = "active") -> list[SessionRecord]:
        rows = await self._rows(
            f"SELECT {ops.SESSION_COLUMNS} FROM sessions WHERE status = %s ORDER BY created_at, row_seq", status
        )
        return [session_from_row(row) for row in rows]

    # -- inbox ------------------------------------------------------------------------------

    async def enqueue(self, session_id: str, delivery: NewDelivery) -> EnqueueResult:
        # In call order in this process (asyncio locks are FIFO), by the session row's lock across them;
        # a delivery sent again after a lost connection is accepted once (`ops.enqueue`).
        tries = itertools.count()
        async with self._inbox_locks.hold(session_id):
            notice = self._delivery_notice(session_id)
            accept = functools.partial(ops.enqueue, session_id=session_id, delivery=delivery, notify=notice)
            return await self._run(lambda conn: accept(conn, retried=next(tries) > 0), "idempotent")

    async def pending_deliveries(self, session_id: str) -> list[DeliveryRecord]:
        rows = await self._rows(
            f"SELECT {ops.DELIVERY_COLUMNS} FROM deliveries WHERE session_id = %s AND NOT consumed ORDER BY seq",
            session_id,
        )
        return [delivery_from_row(row) for row in rows]

    # -- events, history, checkpoint ------------------------------------------------------------

    async def commit(self, session_id: str, commit: Commit) -> None:
        first = commit.events[0].index if commit.events else 0
        for offset, event in enumerate(commit.events):
            if event.index != first + offset:
                raise StoreError(
                    f"The events of one commit must have consecutive indexes: got {event.index} after "
                    f"{first + offset - 1}."
                )
        lines = [bytes(event.line) for event in commit.events]
        params = commits.commit_params(session_id, commit, first, self.events_channel, lines)
        tries = 0

        async def write(conn: Connection) -> None:
            nonlocal tries
            tries += 1
            if tries > 1 and lines and await commits.committed(conn, session_id, first, lines):
                return  # the try whose connection was lost had committed: done
            try:
                if lines:  # one statement; a lost try is told apart by its events (above)
                    await commits.apply(conn, params)
                else:
                    async with transaction(conn):
                        await commits.apply(conn, params)
            except psycopg.Error as exc:
                if exc.sqlstate in commits.COMMIT_REFUSALS:
                    raise commits.commit_error(session_id, commit, exc) from None
                raise

        # eve_commit enforces the fencing token and the next event index: a second try can never
        # append the events twice, and one whose first try committed finds them (`_committed`).
        await self._run(write, "idempotent" if lines else "transaction")
        if commit.events:
            self._waiters.notify((session_id,))

    async def read_events(
        self, session_id: str, start: int = 0, end: int | None = None, *, skip: Collection[str] = ()
    ) -> list[EventRow]:
        rows = await self._rows(
            "SELECT idx, type, line FROM events WHERE session_id = %s AND idx >= %s AND idx < %s"
            " AND NOT (type = ANY(%s)) ORDER BY idx",
            session_id,
            start,
            (1 << 62) if end is None else end,
            list(skip),
        )
        return [EventRow(int(row[0]), row[1], bytes(row[2])) for row in rows]

    async def read_chunk(
        self, session_id: str, start: int, end: int, stop_after: frozenset[str] = frozenset()
    ) -> LineChunk:
        return await self._run(lambda conn: ops.read_chunk(conn, session_id, start, end, stop_after), "read")

    async def event_count(self, session_id: str) -> int:
        rows = await self._rows("SELECT coalesce(max(idx) + 1, 0) FROM events WHERE session_id = %s", session_id)
        return int(rows[0][0])

    async def wait_for_events(self, session_id: str, known: int, timeout: float) -> int:
        self._watches.reader_waits(session_id)
        return await self._waiters.wait_for_count(session_id, known, timeout, lambda: self.event_count(session_id))

    def watched(self, session_id: str) -> bool:
        return self._watches.watched(session_id)

    async def load_checkpoint(self, session_id: str) -> str | None:
        rows = await self._rows("SELECT state FROM checkpoints WHERE session_id = %s", session_id)
        return decode(rows[0][0]) if rows else None

    async def load_history(self, session_id: str) -> list[str]:
        rows = await self._rows("SELECT message FROM history WHERE session_id = %s ORDER BY seq", session_id)
        return [decode(row[0]) for row in rows]

    # -- channel addresses ------------------------------------------------------------------

    async def create_at_address(
        self,
        record: SessionRecord,
        first: NewDelivery,
        address: str,
        *,
        replacing: str | None = None,
        channel_state: str | None = None,
    ) -> tuple[SessionRecord, bool]:
        return await self._run(
            lambda conn: ops.create_at_address(conn, record, first, address, replacing, channel_state, self._announce)
        )

    async def address_holder(self, address: str) -> str | None:
        return await self._run(lambda conn: ops.address_holder(conn, address), "read")

    async def claim_address(self, session_id: str, address: str) -> str:
        return await self._run(lambda conn: ops.claim_address(conn, session_id, address))

    async def session_addresses(self, session_id: str) -> list[str]:
        rows = await self._rows("SELECT address FROM addresses WHERE session_id = %s ORDER BY claim_seq", session_id)
        return [decode(row[0]) for row in rows]

    # -- channel state ----------------------------------------------------------------------

    async def load_channel_state(self, session_id: str) -> str | None:
        rows = await self._rows("SELECT value FROM channel_states WHERE session_id = %s", session_id)
        return decode(rows[0][0]) if rows else None

    async def save_channel_state(self, session_id: str, value: str) -> None:
        await self._run(lambda conn: ops.save_channel_state(conn, session_id, value))

    # -- ownership --------------------------------------------------------------------------

    async def acquire(self, session_id: str, owner: str, ttl: float) -> int | None:
        started = time.monotonic()  # the database times the lease from later: it holds at least until started + ttl
        self._held.pop(session_id, None)
        fence = await self._run(lambda conn: ops.acquire(conn, session_id, owner, ttl), "idempotent")
        if fence is not None:
            self._held[session_id] = (owner, started + ttl / 2)
        return fence

    async def release(self, session_id: str, owner: str) -> None:
        held = self._held.get(session_id)
        if held is not None and held[0] == owner:
            del self._held[session_id]
        await self._run(lambda conn: ops.release(conn, session_id, owner), "idempotent")

    async def orphaned_sessions(self) -> list[str]:
        rows = await self._rows(
            "SELECT s.id FROM owners o JOIN sessions s ON s.id = o.session_id WHERE o.owner IS NOT NULL "
            "AND o.expires_at <= extract(epoch FROM clock_timestamp()) AND s.status = 'active' "
            "ORDER BY s.created_at, s.row_seq"
        )
        return [str(row[0]) for row in rows]

    async def lease_owners(self) -> list[str]:
        return [str(row[0]) for row in await self._rows(ops.LEASE_OWNERS)]

    async def expire_leases(self, owner: str) -> None:
        self._held = {session_id: held for session_id, held in self._held.items() if held[0] != owner}
        await self._run(lambda conn: ops.expire_leases(conn, owner), "idempotent")

    async def expired_sessions(self, now: float, limit: int) -> list[str]:
        rows = await self._rows(ops.EXPIRED_SESSIONS, now, limit)
        return [str(row[0]) for row in rows]

    # -- schedules ----------------------------------------------------------------------------

    async def claim_schedule_fire(self, schedule: str, at: float) -> ScheduleClaim:
        return await self._run(lambda conn: ops.claim_schedule_fire(conn, schedule, at))
