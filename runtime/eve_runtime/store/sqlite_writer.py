"""The SQLite store's writer thread: one connection, one queue, group commit.

Every write is a *job*: a function of the write connection, submitted from the event loop. The
thread takes the first queued job, drains whatever else queued up meanwhile (up to
`MAX_GROUP` jobs), and runs them all in one `BEGIN IMMEDIATE ... COMMIT` transaction, each job
inside its own SAVEPOINT: a job that raises is rolled back to its savepoint and fails alone,
the others commit. Callers' futures are resolved on the loop only after COMMIT returned, so an
acknowledged write is durable (WAL with `synchronous=FULL` fsyncs the log on every commit). While
one group fsyncs, the next one queues up: the busier the store, the larger the groups.

A job whose result is told early (before its COMMIT, see `SqliteWriter.submit`) keeps its
transaction open a little: the loop acts on the result (an accepted message starts its turn), and
what it writes meanwhile joins the same transaction, so the message and its turn's first write
cost one fsync. The transaction commits once a write of the job's session joined it, or after
`JOIN_LIMIT` seconds (a turn that calls a remote model writes what it has before the request
goes out, so only a turn busy with something else makes its message wait that long). A later
write of that session depends on the early job: it is applied only if the job committed, so
nothing is durable about a message that is not.

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
import queue
import sqlite3
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from eve_runtime.store.base import StoreError, StoreUnavailable
from eve_runtime.store.sqlite_jobs import Job, Outcome, WriterStats, as_store_error, refusal
from eve_runtime.store.sqlite_thread import ConnectionThread

__all__ = ["DEFAULT_WAL_LIMIT", "JOIN_LIMIT", "MAX_GROUP", "SqliteWriter"]

T = TypeVar("T")

MAX_GROUP = 512
"""The most jobs one transaction carries (bounds the latency a large group adds)."""

DEFAULT_WAL_LIMIT = 64 * 1024 * 1024
"""Bytes of write-ahead log past which the writer checkpoints it and truncates it to nothing."""

JOIN_LIMIT = 0.002
"""Seconds an early-told job's transaction waits at the most for writes to join it."""

logger = logging.getLogger(__name__)


class SqliteWriter(ConnectionThread[Job]):
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
        self.join_limit = JOIN_LIMIT
        """Seconds an early job's transaction waits at the most for a write of its session."""
        self._unsettled: dict[str, list[Job]] = {}
        """Per session, the jobs told early and not yet durable (on the loop)."""

    def orders(self, session_id: str) -> bool:
        """Whether a write of the session submitted now is applied only after its early jobs committed."""
        return session_id in self._unsettled

    async def submit(
        self,
        fn: Callable[[sqlite3.Connection], T],
        notify: str | None = None,
        early: Callable[[T, asyncio.Future[T]], None] | None = None,
        session: str | None = None,
        durable: Callable[[], None] | None = None,
    ) -> T:
        """Run `fn` in a transaction on the writer thread; its result once the transaction is durable.

        Args:
            fn: The job; it raises to refuse (its writes are then rolled back, nobody else's).
            notify: A session whose event log this job appends to, woken after the commit.
            early: Called on the loop with the job's result and the future of its durability as soon
                as the job ran, while its transaction commits (when the job is the transaction's
                only one; else never). Cancelling the caller then leaves that future to run out.
            session: The session the job writes for. A job told early waits a little for the
                session's next write to join its transaction; a job of a session with jobs told
                early and not yet durable is applied after them, or fails if one of them failed.
            durable: Called on the loop once the job committed, before the caller hears and before
                `notify`'s readers wake (also when the caller was cancelled meanwhile).
        """
        future: asyncio.Future[T] = self._loop.create_future()
        after = tuple(self._unsettled.get(session, ())) if session is not None else ()
        job = Job(fn, future, notify, session, after, durable)
        if early is None:
            self._put(job)
            return await future
        job.early = lambda value: self._told(job, value, lambda: early(value, future))
        self._put(job)
        return await asyncio.shield(future)

    def _told(self, job: Job, value: Any, tell: Callable[[], None]) -> None:
        """On the loop: the early job ran; later writes of its session follow it, then the caller hears."""
        if job.session is not None:
            self._unsettled.setdefault(job.session, []).append(job)
        tell()

    # -- on the writer thread -----------------------------------------------------------------

    def _prepare(self, conn: sqlite3.Connection) -> None:
        if self._wal is not None:
            conn.execute(f"PRAGMA journal_size_limit = {int(self._wal[1])}")

    def _handle(self, conn: sqlite3.Connection, batch: list[Job]) -> None:
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

    def _run_group(self, conn: sqlite3.Connection, group: list[Job]) -> None:
        outcomes: list[Outcome] = []
        pending = group
        while pending:
            pending = self._transaction(conn, pending, outcomes)
        self.stats.jobs += len(outcomes)  # with the jobs that joined an early one
        for job, _, error in outcomes:
            if error is not None:
                job.failure = error
        self.stats.full = any(isinstance(error, StoreUnavailable) for _, _, error in outcomes)
        self._keep_wal_small(conn)  # before answering: a write that returned left the log within bounds
        notify = {job.notify for job, _, error in outcomes if error is None and job.notify is not None}
        self._call_on_loop(self._resolve, outcomes, notify)

    def _call_on_loop(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: nobody waits for these results any more
            logger.debug("event loop closed; dropping a store result")

    def _transaction(self, conn: sqlite3.Connection, jobs: list[Job], outcomes: list[Outcome]) -> list[Job]:
        """Run jobs in one transaction; returns the jobs to retry when SQLite aborted it midway."""
        self.stats.transactions += 1
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            outcomes.extend((job, None, as_store_error(exc)) for job in jobs)
            return []
        if len(jobs) == 1:
            return self._single(conn, jobs[0], outcomes)
        applied: list[tuple[Job, Any]] = []
        for position, job in enumerate(jobs):
            refused = refusal(job)
            if refused is not None:
                outcomes.append((job, None, refused))
                continue
            value, error, lost = _in_savepoint(conn, job)
            if error is not None:
                if lost:
                    return self._aborted(conn, job, error, applied, jobs[position + 1 :], outcomes)
                outcomes.append((job, None, as_store_error(error)))
                continue
            applied.append((job, value))
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            outcomes.extend((job, None, as_store_error(exc)) for job, _ in applied)
            return []
        outcomes.extend((job, value, None) for job, value in applied)
        return []

    def _single(self, conn: sqlite3.Connection, job: Job, outcomes: list[Outcome]) -> list[Job]:
        """A transaction of one job (the common case when not busy): no savepoint, the transaction is the job's.

        A job that raises is rolled back with the whole transaction, which held nothing else. A job
        told early takes in the writes that join it (see the module docstring).
        """
        refused = refusal(job)
        if refused is not None:
            self._rollback(conn)
            outcomes.append((job, None, refused))
            return []
        try:
            value = job.fn(conn)
        except Exception as exc:
            self._rollback(conn)
            outcomes.append((job, None, as_store_error(exc)))
            return []
        applied = [(job, value)]
        if job.early is not None:
            self._call_on_loop(job.early, value)
            if not self._join(conn, job, applied, outcomes):
                return []
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            error = as_store_error(exc)
            outcomes.extend((done, None, error) for done, _ in applied)
            return []
        outcomes.extend((done, result, None) for done, result in applied)
        return []

    def _join(
        self, conn: sqlite3.Connection, early: Job, applied: list[tuple[Job, Any]], outcomes: list[Outcome]
    ) -> bool:
        """Run the jobs queued while `early`'s result is acted on, in its transaction; False if it was lost.

        Each joined job runs in a savepoint and fails alone. When SQLite aborts the transaction
        (an I/O error, a full disk), every job in it fails: the early job's result was told already.
        """
        deadline = time.monotonic() + self.join_limit
        while len(applied) < self._max_batch:
            try:
                item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return True
            if item is None:  # stopping: commit, then let the thread's loop see it
                self._queue.put(None)
                return True
            refused = refusal(item)
            if refused is not None:
                outcomes.append((item, None, refused))
                continue
            value, error, lost = _in_savepoint(conn, item)
            if error is not None:
                if lost:
                    self._rollback(conn)
                    failure = as_store_error(error)
                    outcomes.extend((done, None, failure) for done, _ in [*applied, (item, None)])
                    return False
                outcomes.append((item, None, as_store_error(error)))
                continue
            applied.append((item, value))
            if item.session is not None and item.session == early.session:
                return True
        return True

    def _aborted(
        self,
        conn: sqlite3.Connection,
        culprit: Job,
        exc: BaseException,
        applied: list[tuple[Job, Any]],
        rest: list[Job],
        outcomes: list[Outcome],
    ) -> list[Job]:
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

    def _resolve(self, outcomes: Iterable[Outcome], notify: set[str]) -> None:
        for job, value, error in outcomes:
            if job.early is not None and job.session is not None:
                self._settled(job)
            if error is None and job.durable is not None:
                try:
                    job.durable()
                except Exception:  # pragma: no cover - a bug there must not strand the other callers
                    logger.exception("a committed job's callback failed")
            if job.future.cancelled():
                continue
            if error is None:
                job.future.set_result(value)
            else:
                job.future.set_exception(error)
        if notify:
            self._on_events(notify)

    def _settled(self, job: Job) -> None:
        unsettled = self._unsettled.get(job.session or "")
        if unsettled is not None and job in unsettled:
            unsettled.remove(job)
            if not unsettled:
                del self._unsettled[job.session or ""]


def _in_savepoint(conn: sqlite3.Connection, job: Job) -> tuple[Any, BaseException | None, bool]:
    """Run a job in a savepoint of the open transaction: its value, its error, and whether SQLite lost the transaction.

    A job that raises is rolled back to its savepoint and fails alone; when SQLite rolled back the
    whole transaction (an I/O error, a full disk) or the savepoint itself failed, it is lost.
    """
    try:
        conn.execute("SAVEPOINT job")
    except sqlite3.Error as exc:
        return None, exc, True
    try:
        value = job.fn(conn)
    except Exception as exc:
        if not conn.in_transaction:
            return None, exc, True
        try:
            conn.execute("ROLLBACK TO job")
            conn.execute("RELEASE job")
        except sqlite3.Error as rollback_error:
            return None, rollback_error, True
        return None, exc, False
    try:
        conn.execute("RELEASE job")
    except sqlite3.Error as exc:
        return None, exc, True
    return value, None, False
