"""Stores: the memory backend (tests) and the SQLite local world, behind one contract."""

from __future__ import annotations

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
    NewDelivery,
    OwnershipLost,
    SessionHandoff,
    SessionNotActive,
    SessionRecord,
    SessionStatus,
    Store,
    StoreError,
    StoreLocked,
)
from eve_runtime.store.memory import MemoryStore
from eve_runtime.store.sqlite import SqliteStore, open_local_store

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
    "MemoryStore",
    "NewDelivery",
    "OwnershipLost",
    "SessionNotActive",
    "SessionHandoff",
    "SessionRecord",
    "SessionStatus",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreLocked",
    "open_local_store",
]
