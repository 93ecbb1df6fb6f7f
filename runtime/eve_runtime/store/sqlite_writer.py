"""The SQLite store's writer thread: one connection, one queue, group commit.

Every write is a *job*: a function of the write connection, submitted from the event loop. The
thread takes the first queued job, drains whatever else queued up meanwhile (up to
`MAX_GROUP` jobs), and runs them all in one `BEGIN IMMEDIATE ... COMMIT` transaction, each job
inside its own SAVEPOINT: a job that raises is rolled back to its savepoint and fails alone,
the others commit. Callers' futures are resolved on the loop only after COMMIT returned, so an
acknowledged write is durable (WAL with `synchronous=FULL` fsyncs the log on every commit). While
one group fsyncs, the next one queues up: the busier the store, the larger the groups.

The event loop never blocks on SQLite: it only puts jobs on a queue and awaits futures.

The write-ahead log is kept small: once it grows past `wal_limit` bytes (and after a write that
found the disk full), the writer checkpoints it with `wal_checkpoint(TRUNCATE)`, and
`journal_size_limit` caps what SQLite keeps of it. A full disk or an I/O error is
[`StoreUnavailable`][eve_runtime.store.base.StoreUnavailable] (nothing of the job was stored).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from eve_runtime.store.base import StoreError, StoreUnavailable
from eve_runtime.store.sqlite_thread import ConnectionThread

__all__ = ["DEFAULT_WAL_LIMIT", "MAX_GROUP", "SqliteWriter", "WriterStats", "as_store_error"]

T = TypeVar("T")

MAX_GROUP = 512
"""The most jobs one transaction carries (bounds the latency a large group adds)."""

DEFAULT_WAL_LIMIT = 64 * 1024 * 1024
"""Bytes of write-ahead log past which the writer checkpoints it and truncates it to nothing."""

logger = logging.getLogger(__name__)

_UNAVAILABLE = {sqlite3.SQLITE_FULL: "the store's disk is full", sqlite3.SQLITE_IOERR: "the store's disk failed"}


@dataclass
class WriterStats:
    """Counters of the writer thread (informational)."""

    transactions: int = 0
    """Transactions committed (or attempted)."""
    checkpoints: int = 0
    """Truncating checkpoints of the write-ahead log."""
    full: bool = False
    """Whether the last transaction failed for want of disk space (or an I/O error)."""
    jobs: int = 0
    """Jobs run, successful or not."""


class _Job:
    __slots__ = ("early", "fn", "future", "notify")

    def __init__(
        self,
        fn: Callable[[sqlite3.Connection], Any],
        future: asyncio.Future[Any],
        notify: str | None,
        early: Callable[[Any], None] | None = None,
    ):
        self.fn = fn
        self.future = future
        self.notify = notify
        self.early = early


_Outcome = tuple[_Job, Any, BaseException | None]


def _unavailable(exc: BaseException) -> str | None:
    """Why a SQLite error means the disk cannot take writes now (full, failing), or None."""
    code = getattr(exc, "sqlite_errorcode", None)
    return _UNAVAILABLE.get(code & 0xFF) if isinstance(exc, sqlite3.Error) and isinstance(code, int) else None


def as_store_error(exc: BaseException) -> BaseException:
    """A SQLite error as the store error it means (`StoreUnavailable` for a full or failing disk)."""
    if isinstance(exc, sqlite3.Error):
        reason = _unavailable(exc)
        error = (
            StoreError(f"SQLite failed: {exc}") if reason is None else StoreUnavailable(f"SQLite: {exc}", reason=reason)
        )
        error.__cause__ = exc
        return error
    return exc


class SqliteWriter(ConnectionThread[_Job]):
    """The thread that owns the write connection and applies jobs in group transactions.

    Args:
        connect: Opens the write connection (and prepares the schema); runs on the thread.
        loop: The event loop whose futures the thread resolves.
        on_events: Called on the loop, after a transaction committed, with the sessions whose
            event logs grew.
        wal: The write-ahead log's path, and the size past which it is checkpointed and truncated.
    """

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        loop: asyncio.AbstractEventLoop,
        on_events: Callable[[set[str]], None],
        wal: tuple[str, int] | None = None,
    ) -> None:
        super().__init__(connect, loop, "eve-sqlite-writer", MAX_GROUP)
        self._wal = wal
        self._on_events = on_events
        self.stats = WriterStats()

    async def submit(
        self,
        fn: Callable[[sqlite3.Connection], T],
        notify: str | None = None,
        early: Callable[[T, asyncio.Future[T]], None] | None = None,
    ) -> T:
        """Run `fn` in a transaction on the writer thread; its result once the transaction is durable.

        Args:
            fn: The job; it raises to refuse (its writes are then rolled back, nobody else's).
            notify: A session whose event log this job appends to, woken after the commit.
            early: Called on the loop with the job's result and the future of its durability as soon
                as the job ran, while its transaction commits (when the job is the transaction's
                only one; else never). Cancelling the caller then leaves that future to run out.
        """
        future: asyncio.Future[T] = self._loop.create_future()
        if early is None:
            self._put(_Job(fn, future, notify))
            return await future
        self._put(_Job(fn, future, notify, lambda value: early(value, future)))
        return await asyncio.shield(future)

    # -- on the writer thread -----------------------------------------------------------------

    def _prepare(self, conn: sqlite3.Connection) -> None:
        if self._wal is not None:
            conn.execute(f"PRAGMA journal_size_limit = {int(self._wal[1])}")

    def _handle(self, conn: sqlite3.Connection, batch: list[_Job]) -> None:
        try:
            self._run_group(conn, batch)
        except Exception as exc:  # pragma: no cover - a bug here must not strand the callers
            logger.exception("the SQLite writer failed")
            self._rollback(conn)
            failed = [(job, None, StoreError(f"The SQLite writer failed: {exc!r}")) for job in batch]
            self._loop.call_soon_threadsafe(self._resolve, failed, set())

    def _keep_wal_small(self, conn: sqlite3.Connection) -> None:
        """Checkpoint and truncate the WAL when it outgrew its limit, or the disk filled up (it may free it)."""
        if self._wal is None:
            return
        path, limit = self._wal
        try:
            size = os.path.getsize(path)
        except OSError:
            return
        if size <= limit and not (self.stats.full and size):
            return
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            self.stats.checkpoints += 1
        except sqlite3.Error as exc:  # a reader kept it busy, or no room to copy pages: the next group tries again
            logger.info("could not checkpoint the write-ahead log yet: %s", exc)

    def _run_group(self, conn: sqlite3.Connection, group: list[_Job]) -> None:
        outcomes: list[_Outcome] = []
        pending = group
        while pending:
            pending = self._transaction(conn, pending, outcomes)
        self.stats.jobs += len(group)
        self.stats.full = any(isinstance(error, StoreUnavailable) for _, _, error in outcomes)
        self._keep_wal_small(conn)  # before answering: a write that returned left the log within bounds
        notify = {job.notify for job, _, error in outcomes if error is None and job.notify is not None}
        self._call_on_loop(self._resolve, outcomes, notify)

    def _call_on_loop(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: nobody waits for these results any more
            logger.debug("event loop closed; dropping a store result")

    def _transaction(self, conn: sqlite3.Connection, jobs: list[_Job], outcomes: list[_Outcome]) -> list[_Job]:
        """Run jobs in one transaction; returns the jobs to retry when SQLite aborted it midway."""
        self.stats.transactions += 1
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            outcomes.extend((job, None, as_store_error(exc)) for job in jobs)
            return []
        if len(jobs) == 1:
            return self._single(conn, jobs[0], outcomes)
        applied: list[tuple[_Job, Any]] = []
        for position, job in enumerate(jobs):
            try:
                conn.execute("SAVEPOINT job")
            except sqlite3.Error as exc:
                return self._aborted(conn, job, exc, applied, jobs[position + 1 :], outcomes)
            try:
                value = job.fn(conn)
            except Exception as exc:
                if not conn.in_transaction:
                    # SQLite rolled back the whole transaction (I/O error, disk full, ...).
                    return self._aborted(conn, job, exc, applied, jobs[position + 1 :], outcomes)
                try:
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                except sqlite3.Error as rollback_error:
                    return self._aborted(conn, job, rollback_error, applied, jobs[position + 1 :], outcomes)
                outcomes.append((job, None, as_store_error(exc)))
                continue
            try:
                conn.execute("RELEASE job")
            except sqlite3.Error as exc:
                return self._aborted(conn, job, exc, applied, jobs[position + 1 :], outcomes)
            applied.append((job, value))
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            outcomes.extend((job, None, as_store_error(exc)) for job, _ in applied)
            return []
        outcomes.extend((job, value, None) for job, value in applied)
        return []

    def _single(self, conn: sqlite3.Connection, job: _Job, outcomes: list[_Outcome]) -> list[_Job]:
        """A transaction of one job (the common case when not busy): no savepoint, the transaction is the job's.

        A job that raises is rolled back with the whole transaction, which held nothing else.
        """
        try:
            value = job.fn(conn)
        except Exception as exc:
            self._rollback(conn)
            outcomes.append((job, None, as_store_error(exc)))
            return []
        if job.early is not None:
            self._call_on_loop(job.early, value)
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            outcomes.append((job, None, as_store_error(exc)))
            return []
        outcomes.append((job, value, None))
        return []

    def _aborted(
        self,
        conn: sqlite3.Connection,
        culprit: _Job,
        exc: BaseException,
        applied: list[tuple[_Job, Any]],
        rest: list[_Job],
        outcomes: list[_Outcome],
    ) -> list[_Job]:
        """The transaction is lost: fail the job that broke it; the others run again in a new one."""
        self._rollback(conn)
        outcomes.append((culprit, None, as_store_error(exc)))
        return [job for job, _ in applied] + rest

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:  # pragma: no cover - nothing more to undo
                logger.exception("ROLLBACK failed")

    # -- back on the loop -----------------------------------------------------------------------

    def _resolve(self, outcomes: Iterable[_Outcome], notify: set[str]) -> None:
        for job, value, error in outcomes:
            if job.future.cancelled():
                continue
            if error is None:
                job.future.set_result(value)
            else:
                job.future.set_exception(error)
        if notify:
            self._on_events(notify)
