"""The SQLite store: the local world, one database file served by one process.

Layout of the data directory:

- `eve.sqlite3` (plus `-wal` and `-shm` while open): the database, in WAL mode with
  `synchronous=FULL`, so an acknowledged write survives a power cut;
- `LOCK`: held with an exclusive `flock` by the one process that serves the store, and holding
  its pid. SQLite versions 3.7.0 to 3.51.2 can corrupt a WAL database written by two processes
  at once, so eve never lets a second process (or a second store object) open it.

Writes go to one writer thread that groups concurrent commits into one transaction
(see [`SqliteWriter`][eve_runtime.store.sqlite_writer.SqliteWriter], which also keeps the WAL
small). Reads see only committed transactions: those of a few rows by key run on the event
loop's own connection (a few microseconds, a tenth of a hand-off to a thread and back), those of
unbounded size (events, history, lists of sessions) on one reader thread with its own, which
answers the reads queued together in one batch
([`SqliteReader`][eve_runtime.store.sqlite_reader.SqliteReader]).

A full disk must not stop the sessions already running, nor lose what was accepted: while the
data directory's file system has less than `min_free_mb` free, new work (a new session, a new
delivery) is refused with [`StoreUnavailable`][eve_runtime.store.base.StoreUnavailable], so the
room left is for the turns under way; and a write the disk cannot take fails the same way
without storing anything.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TypeVar

from eve_runtime.store import sqlite_leases as leases, sqlite_ops as ops
from eve_runtime.store.backend_common import EventWaiters
from eve_runtime.store.base import (
    Commit,
    DeliveryRecord,
    EarlyDelivery,
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
from eve_runtime.store.sqlite_chunks import read_chunk
from eve_runtime.store.sqlite_directory import LOCK_NAME, drop_lock, free_megabytes, take_lock
from eve_runtime.store.sqlite_jobs import WriterStats, as_store_error
from eve_runtime.store.sqlite_reader import SqliteReader
from eve_runtime.store.sqlite_schema import DATABASE_NAME, connect, ensure_schema
from eve_runtime.store.sqlite_writer import DEFAULT_WAL_LIMIT, SqliteWriter
from eve_runtime.store.tail_cache import DEFAULT_TAIL_CACHE_BYTES, TailCache

__all__ = ["DEFAULT_MIN_FREE_MB", "LOCK_NAME", "SqliteStore", "free_megabytes", "open_local_store"]

T = TypeVar("T")

DEFAULT_MIN_FREE_MB = 16.0
"""The free space (MB) under which the local world refuses new work (`EVE_MIN_FREE_MB`)."""

FREE_SPACE_TTL = 1.0
"""Seconds a reading of the free space is used for (`statvfs` cost a few percent of a turn's CPU), while
it is `FREE_SPACE_MARGIN_MB` over the floor; nearer, every check reads it (space freed counts at once)."""

FREE_SPACE_MARGIN_MB = 256.0
"""Megabytes over the floor above which a reading of the free space is kept for `FREE_SPACE_TTL`."""

logger = logging.getLogger(__name__)


class SqliteStore(Store):
    """The store of the local world: one SQLite database in `directory`, served by one process.

    Args:
        directory: The data directory (created when missing); the database is
            `directory / "eve.sqlite3"`.
        min_free_mb: Refuse new sessions and deliveries while the disk has less free space (0: never).
        wal_limit: Bytes of write-ahead log past which it is checkpointed and truncated.
        tail_cache_bytes: Memory for the newest event lines of recently written sessions, which
            streams read without a database read (0: none; see `tail_cache.py`).
    """

    def __init__(
        self,
        directory: Path,
        *,
        min_free_mb: float = DEFAULT_MIN_FREE_MB,
        wal_limit: int = DEFAULT_WAL_LIMIT,
        tail_cache_bytes: int = DEFAULT_TAIL_CACHE_BYTES,
    ) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DATABASE_NAME
        self.min_free_mb = min_free_mb
        self._free: tuple[float, float] = (-FREE_SPACE_TTL, 0.0)
        """When (monotonic seconds) the free space was last read, and the megabytes it was."""
        self._wal_limit = wal_limit
        self._lock_fd: int | None = None
        self._writer: SqliteWriter | None = None
        self._reader: SqliteReader | None = None
        self._peek_conn: sqlite3.Connection | None = None  # the event loop's (see the module docstring)
        self._waiters = EventWaiters()
        self.tail_cache = TailCache(tail_cache_bytes)

    @property
    def sqlite_version(self) -> str:
        """The version of the SQLite library in use (log it: WAL bugs depend on it)."""
        return sqlite3.sqlite_version

    @property
    def stats(self) -> WriterStats:
        """The writer's counters (transactions and jobs) since `open`."""
        return WriterStats() if self._writer is None else self._writer.stats

    async def open(self) -> None:
        """Lock the directory, open the database and create its schema when new.

        Raises:
            StoreLocked: Another process (or another store object) has the store open.
            StoreError: The database cannot be opened, or was written by a newer eve.
        """
        if self._writer is not None:
            return
        loop = asyncio.get_running_loop()
        self._lock_fd = take_lock(self.directory)
        self.tail_cache.clear()  # lines a late commit added after the last close may be another database's now
        try:
            wal = (f"{self.path}-wal", self._wal_limit)
            self._writer = SqliteWriter(self._connect_writer, loop, self._waiters.notify, wal)
            await self._writer.start()
            self._reader = SqliteReader(functools.partial(connect, self.path), loop)
            await self._reader.start()
            self._peek_conn = connect(self.path)
        except BaseException:
            await self._shutdown()
            raise
        logger.info("opened the eve store %s (SQLite %s)", self.path, self.sqlite_version)

    async def close(self) -> None:
        """Finish queued writes, close both connections and release the lock."""
        await self._shutdown()

    async def _shutdown(self) -> None:
        self.tail_cache.clear()
        writer, self._writer = self._writer, None
        reader, self._reader = self._reader, None
        peek_conn, self._peek_conn = self._peek_conn, None
        lock_fd, self._lock_fd = self._lock_fd, None
        try:
            if peek_conn is not None:
                peek_conn.close()
            if writer is not None:
                await writer.stop()
            if reader is not None:
                await reader.stop()
        finally:
            if lock_fd is not None:
                drop_lock(lock_fd)

    def _connect_writer(self) -> sqlite3.Connection:
        conn = connect(self.path)
        try:
            ensure_schema(conn, self.path)
        except BaseException as exc:
            conn.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"Cannot prepare the eve store database {str(self.path)!r}: {exc}") from exc
            raise
        return conn

    async def pragmas(self) -> dict[str, object]:
        """The write connection's durability settings (`journal_mode`, `synchronous`)."""

        def read(conn: sqlite3.Connection) -> dict[str, object]:
            return {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("journal_mode", "synchronous")}

        return await self._write(read)

    async def health(self) -> str | None:
        """Why no new work is taken: the disk is under the free-space floor, or the last write found it full."""
        low = self._low_on_space()
        if low is not None:
            return low
        if self._writer is not None and self._writer.stats.full:
            return "the store's disk is full (or failing): the last write could not be stored"
        return None

    def _low_on_space(self) -> str | None:
        if self.min_free_mb <= 0:
            return None
        read_at, free = self._free
        now = time.monotonic()
        if now - read_at >= FREE_SPACE_TTL or free < self.min_free_mb + FREE_SPACE_MARGIN_MB:
            try:
                free = free_megabytes(self.directory)
            except OSError:
                return None
            self._free = (now, free)
        if free >= self.min_free_mb:
            return None
        return f"the store's disk has {free:.1f} MB free, under the {self.min_free_mb:g} MB floor (EVE_MIN_FREE_MB)"

    def _refuse_new_work(self) -> None:
        low = self._low_on_space()
        if low is not None:
            raise StoreUnavailable(f"{low}; refusing new work in {str(self.directory)!r}", reason=low, retry_after=30)

    async def _write(
        self,
        fn: Callable[[sqlite3.Connection], T],
        notify: str | None = None,
        early: Callable[[T, asyncio.Future[T]], None] | None = None,
        session: str | None = None,
        durable: Callable[[], None] | None = None,
    ) -> T:
        if self._writer is None:
            raise StoreError(f"The eve store in {str(self.directory)!r} is closed: call open() first.")
        return await self._writer.submit(fn, notify, early, session, durable)

    async def _read(self, fn: Callable[..., T], *args: object) -> T:
        if self._reader is None:
            raise StoreError(f"The eve store in {str(self.directory)!r} is closed: call open() first.")
        return await self._reader.submit(lambda conn: fn(conn, *args))

    def _peek(self, fn: Callable[..., T], *args: object) -> T:
        """A read of a few rows by key, on the event loop's connection."""
        if self._peek_conn is None:
            raise StoreError(f"The eve store in {str(self.directory)!r} is closed: call open() first.")
        try:
            return fn(self._peek_conn, *args)
        except sqlite3.Error as exc:
            raise as_store_error(exc) from exc

    # -- sessions ---------------------------------------------------------------------------

    async def create_session(
        self, record: SessionRecord, first: NewDelivery | None = None
    ) -> tuple[SessionRecord, bool]:
        self._refuse_new_work()
        return await self._write(lambda conn: ops.create_session(conn, record, first))

    async def get_session(self, session_id: str) -> SessionRecord | None:
        return self._peek(ops.get_session, session_id)

    async def list_sessions(self, status: SessionStatus = "active") -> list[SessionRecord]:
        return await self._read(ops.list_sessions, status)

    # -- inbox ------------------------------------------------------------------------------

    async def enqueue(self, session_id: str, delivery: NewDelivery) -> EnqueueResult:
        self._refuse_new_work()
        return await self._write(lambda conn: ops.enqueue(conn, session_id, delivery))

    async def enqueue_early(self, session_id: str, delivery: NewDelivery, early: EarlyDelivery) -> EnqueueResult:
        self._refuse_new_work()
        return await self._write(lambda conn: ops.enqueue(conn, session_id, delivery), early=early, session=session_id)

    def orders_after(self, session_id: str) -> bool:
        return self._writer is not None and self._writer.orders(session_id)

    async def pending_deliveries(self, session_id: str) -> list[DeliveryRecord]:
        return self._peek(ops.pending_deliveries, session_id)

    # -- events, history, checkpoint ------------------------------------------------------------

    async def commit(self, session_id: str, commit: Commit) -> None:
        notify = session_id if commit.events else None
        await self._write(
            lambda conn: ops.apply_commit(conn, session_id, commit),
            notify,
            session=session_id,
            durable=lambda: self.tail_cache.add(session_id, commit.events),  # before the stream readers wake
        )

    async def read_events(
        self, session_id: str, start: int = 0, end: int | None = None, *, skip: Collection[str] = ()
    ) -> list[EventRow]:
        return await self._read(ops.read_events, session_id, start, end, tuple(skip))

    async def read_chunk(
        self, session_id: str, start: int, end: int, stop_after: frozenset[str] = frozenset()
    ) -> LineChunk:
        if self._writer is not None:  # a closed store fails in `_read`
            cached = self.tail_cache.chunk(session_id, start, end, stop_after)
            if cached is not None:
                return cached
        return await self._read(read_chunk, session_id, start, end, stop_after)

    async def event_count(self, session_id: str) -> int:
        if self._writer is not None:  # a closed store fails in `_peek`
            cached = self.tail_cache.count(session_id)
            if cached is not None:
                return cached
        return self._peek(ops.event_count, session_id)

    async def wait_for_events(self, session_id: str, known: int, timeout: float) -> int:
        return await self._waiters.wait_for_count(session_id, known, timeout, lambda: self.event_count(session_id))

    def watched(self, session_id: str) -> bool:
        return self._waiters.watched(session_id)

    async def load_checkpoint(self, session_id: str) -> str | None:
        return self._peek(ops.load_checkpoint, session_id)

    async def load_history(self, session_id: str) -> list[str]:
        return await self._read(ops.load_history, session_id)

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
        self._refuse_new_work()
        return await self._write(
            lambda conn: ops.create_at_address(conn, record, first, address, replacing, channel_state)
        )

    async def address_holder(self, address: str) -> str | None:
        return self._peek(ops.address_holder, address)

    async def claim_address(self, session_id: str, address: str) -> str:
        return await self._write(lambda conn: ops.claim_address(conn, session_id, address))

    async def session_addresses(self, session_id: str) -> list[str]:
        return self._peek(ops.session_addresses, session_id)

    # -- channel state ----------------------------------------------------------------------

    async def load_channel_state(self, session_id: str) -> str | None:
        return self._peek(ops.load_channel_state, session_id)

    async def save_channel_state(self, session_id: str, value: str) -> None:
        await self._write(lambda conn: ops.save_channel_state(conn, session_id, value))

    # -- ownership --------------------------------------------------------------------------

    async def acquire(self, session_id: str, owner: str, ttl: float) -> int | None:
        return await self._write(lambda conn: leases.acquire(conn, session_id, owner, ttl))

    async def release(self, session_id: str, owner: str) -> None:
        await self._write(lambda conn: leases.release(conn, session_id, owner))

    async def orphaned_sessions(self) -> list[str]:
        return await self._read(leases.orphaned_sessions)

    async def lease_owners(self) -> list[str]:
        return self._peek(leases.lease_owners)

    async def expire_leases(self, owner: str) -> None:
        await self._write(lambda conn: leases.expire_leases(conn, owner))

    async def expired_sessions(self, now: float, limit: int) -> list[str]:
        return await self._read(ops.expired_sessions, now, limit)

    # -- schedules ----------------------------------------------------------------------------

    async def claim_schedule_fire(self, schedule: str, at: float) -> ScheduleClaim:
        return await self._write(lambda conn: ops.claim_schedule_fire(conn, schedule, at))


async def open_local_store(directory: Path) -> SqliteStore:
    """Open the local world's store in `directory` (see [`SqliteStore`][eve_runtime.store.sqlite.SqliteStore]).

    Raises:
        StoreLocked: Another process serves this store.
    """
    store = SqliteStore(directory)
    await store.open()
    return store
