"""The Postgres store's commit: one `eve_commit` call, and telling whether a try whose connection was lost landed.

`eve_commit` (see `postgres_schema.py`) checks the fencing token and the next event index, so a
second try never appends a commit's events twice; a try after a lost one first looks for those
events, since finding them means the lost try had committed.
"""

from __future__ import annotations

from typing import Any

import psycopg

from eve_runtime.store.base import Commit, EventIndexConflict, OwnershipLost, SessionNotActive, StoreError
from eve_runtime.store.postgres_pool import Connection
from eve_runtime.store.postgres_schema import (
    SQLSTATE_INDEX_CONFLICT,
    SQLSTATE_MISSING_SESSION,
    SQLSTATE_OWNERSHIP_LOST,
    encode,
)

__all__ = ["COMMIT", "COMMIT_REFUSALS", "commit_error", "commit_params", "committed"]

COMMIT = "SELECT eve_commit(%s, %s, %s, %s::text[], %s::bytea[], %s::bytea[], %s, %s, %s::text[], %s, %s, %s, %s, %s)"


def commit_params(session_id: str, commit: Commit, first: int, channel: str) -> tuple[Any, ...]:
    """The arguments of one `eve_commit` call (`COMMIT`); it notifies `channel` when it adds events."""
    handoff = commit.handoff
    return (
        session_id,
        commit.fence,
        first,
        [event.type for event in commit.events],
        [bytes(event.line) for event in commit.events],
        [encode(message) for message in commit.history],
        commit.replace_history,
        None if commit.checkpoint is None else encode(commit.checkpoint),
        list(commit.consumed),
        commit.status,
        handoff is not None,
        None if handoff is None else handoff.deployment,
        None if handoff is None else handoff.deadline,
        channel,
    )


COMMIT_REFUSALS = frozenset({SQLSTATE_MISSING_SESSION, SQLSTATE_OWNERSHIP_LOST, SQLSTATE_INDEX_CONFLICT})
"""The SQLSTATEs by which `eve_commit` refuses a commit (see `commit_error`)."""


async def committed(conn: Connection, session_id: str, first: int, lines: list[bytes]) -> bool:
    """Whether the session's events from `first` are `lines`: a commit whose connection was lost had landed."""
    cursor = await conn.execute(
        "SELECT line FROM events WHERE session_id = %s AND idx >= %s AND idx < %s ORDER BY idx",
        (session_id, first, first + len(lines)),
    )
    return [bytes(row[0]) for row in await cursor.fetchall()] == lines


def commit_error(session_id: str, commit: Commit, exc: psycopg.Error) -> StoreError:
    """The store error a refused `eve_commit` call stands for."""
    detail = exc.diag.message_primary or ""
    if exc.sqlstate == SQLSTATE_MISSING_SESSION:
        return SessionNotActive(f"Session {session_id!r} does not exist.")
    if exc.sqlstate == SQLSTATE_OWNERSHIP_LOST:
        return OwnershipLost(
            f"Session {session_id!r} has a new owner (fencing token {detail}, this writer holds "
            f"{commit.fence}): this writer was superseded and must stop."
        )
    if exc.sqlstate == SQLSTATE_INDEX_CONFLICT:
        first = commit.events[0].index if commit.events else 0
        return EventIndexConflict(
            f"Session {session_id!r} has {detail} events, so the next event index is {detail}, "
            f"not {first}: another writer appended first, or this writer is stale."
        )
    return StoreError(f"Postgres failed: {str(exc).strip()}")
