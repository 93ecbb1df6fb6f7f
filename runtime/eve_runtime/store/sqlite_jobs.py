"""The SQLite writer's records: a job, its stats, and what a SQLite error means for the store.

A *job* is a function of the write connection with the future its caller awaits (see
`eve_runtime.store.sqlite_writer`). A job told early (its result before its COMMIT) is followed by
the later writes of its session: they carry it in `after` and are refused if it failed.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eve_runtime.store.base import StoreError, StoreUnavailable

__all__ = ["Job", "Outcome", "WriterStats", "as_store_error", "refusal"]

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


class Job:
    """One write for the writer thread (see the module docstring)."""

    __slots__ = ("after", "durable", "early", "failure", "fn", "future", "notify", "session")

    def __init__(
        self,
        fn: Callable[[sqlite3.Connection], Any],
        future: asyncio.Future[Any],
        notify: str | None,
        session: str | None = None,
        after: tuple[Job, ...] = (),
        durable: Callable[[], None] | None = None,
    ):
        self.fn = fn
        self.future = future
        self.notify = notify
        self.session = session
        self.after = after
        """Early jobs this one is applied only after (and not at all if one of them failed)."""
        self.durable = durable
        """Called on the loop once the job committed, before its caller hears and its session's readers wake."""
        self.early: Callable[[Any], None] | None = None
        self.failure: BaseException | None = None
        """Set on the writer thread once the job failed (read there by the jobs `after` it)."""


Outcome = tuple[Job, Any, BaseException | None]


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


def refusal(job: Job) -> BaseException | None:
    """Why the job may not be applied: an early job it follows failed (checked on the writer thread).

    The refusal is of the kind of that failure: a full disk refuses what followed as unavailable too.
    """
    for earlier in job.after:
        failure = earlier.failure
        if failure is None:
            continue
        message = "A write of this session followed a delivery that could not be stored; it was not applied."
        if isinstance(failure, StoreUnavailable):
            return StoreUnavailable(message, reason=failure.reason, retry_after=failure.retry_after)
        return StoreError(message)
    return None
