"""Stores: the memory backend (tests), the SQLite local world and the Postgres world, behind one contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eve_runtime.store.base import (
    IDEMPOTENCY_WINDOW,
    MAX_ADDRESSES,
    AddressInUse,
    AddressLimitReached,
    Commit,
    DeliveryKind,
    DeliveryRecord,
    EnqueueResult,
    EventIndexConflict,
    EventRow,
    LineChunk,
    NewDelivery,
    OwnershipLost,
    ScheduleClaim,
    SessionHandoff,
    SessionNotActive,
    SessionRecord,
    SessionStatus,
    Store,
    StoreError,
    StoreLocked,
    StoreUnavailable,
)
from eve_runtime.store.memory import MemoryStore
from eve_runtime.store.sqlite import SqliteStore, open_local_store

if TYPE_CHECKING:
    from eve_runtime.store.postgres import PostgresStore


def __getattr__(name: str) -> Any:
    # The Postgres store needs psycopg (the `postgres` extra): import it only when asked for.
    if name == "PostgresStore":
        from eve_runtime.store.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "IDEMPOTENCY_WINDOW",
    "MAX_ADDRESSES",
    "AddressInUse",
    "AddressLimitReached",
    "Commit",
    "DeliveryKind",
    "DeliveryRecord",
    "EnqueueResult",
    "EventIndexConflict",
    "EventRow",
    "LineChunk",
    "MemoryStore",
    "NewDelivery",
    "OwnershipLost",
    "PostgresStore",
    "ScheduleClaim",
    "SessionNotActive",
    "SessionHandoff",
    "SessionRecord",
    "SessionStatus",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreLocked",
    "StoreUnavailable",
    "open_local_store",
]
