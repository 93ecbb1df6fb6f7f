"""The store backends the contract suite runs against, and helpers to build records.

A backend joins the suite by adding a parameter to `backend` (and a class below): every test in
`test_contract*.py` then runs against it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.store import (
    DeliveryKind,
    EventRow,
    MemoryStore,
    NewDelivery,
    PostgresStore,
    SessionRecord,
    SqliteStore,
    Store,
)
from tests import pg


class Backend:
    """Opens a store, and reopens it the way a restarted process would."""

    name = ""

    def __init__(self) -> None:
        self.current: Store | None = None

    def make(self) -> Store:
        raise NotImplementedError

    async def open(self) -> Store:
        store = self.make()
        await store.open()
        self.current = store
        return store

    async def reopen(self, store: Store) -> Store:
        """Close `store` and open the same data again."""
        await store.close()
        return await self.open()

    async def close(self) -> None:
        if self.current is not None:
            await self.current.close()
            self.current = None


class MemoryBackend(Backend):
    """Memory keeps its data in the object: reopening reopens the same object."""

    name = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.store = MemoryStore()

    def make(self) -> Store:
        return self.store


class SqliteBackend(Backend):
    """SQLite reopens with a new store object on the same directory, like a new process."""

    name = "sqlite"

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory

    def make(self) -> Store:
        return SqliteStore(self.directory)


class PostgresBackend(Backend):
    """Postgres reopens with a new store object on the same schema, like a new process."""

    name = "postgres"

    def __init__(self, schema: str) -> None:
        super().__init__()
        self.schema = schema

    def make(self) -> Store:
        return PostgresStore(pg.database_url(), schema=self.schema)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    name = request.param
    if name == "memory":
        yield MemoryBackend()
    elif name == "sqlite":
        yield SqliteBackend(tmp_path / "workflow-data")
    elif name == "postgres":
        with pg.fresh_schema() as schema:
            yield PostgresBackend(schema)
    else:  # pragma: no cover
        raise AssertionError(name)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    opened = await backend.open()
    try:
        yield opened
    finally:
        await backend.close()


_clock = iter(range(1, 1 << 30))


def session(session_id: str, *, operation_id: str | None = None, created_at: float | None = None) -> SessionRecord:
    """A session record (creation times grow with every call unless given)."""
    return SessionRecord(
        id=session_id,
        agent="main",
        created_at=created_at if created_at is not None else time.time() + next(_clock) * 1e-3,
        eve_version="0.1.0",
        operation_id=operation_id,
    )


def delivery(
    delivery_id: str, *, key: str | None = None, kind: DeliveryKind = "message", **payload: Any
) -> NewDelivery:
    """A delivery; `payload` defaults to a message naming the delivery."""
    return NewDelivery(id=delivery_id, kind=kind, payload=payload or {"text": delivery_id}, idempotency_key=key)


def events(start: int, *lines: bytes, type: str = "message.delta") -> list[EventRow]:
    """Event rows numbered from `start`."""
    return [EventRow(start + i, type, line) for i, line in enumerate(lines)]


@pytest.fixture
def schema() -> Iterator[str]:
    """A fresh Postgres schema of its own (dropped afterwards), for the Postgres-only store tests."""
    with pg.fresh_schema() as name:
        yield name


def patient(store: SqliteStore) -> SqliteStore:
    """The store, its writer waiting up to 5 s for writes to join an early job (a loaded machine may take
    longer than `JOIN_LIMIT` to run the early callback); it stops waiting as soon as they did."""
    assert store._writer is not None
    store._writer.join_limit = 5.0
    return store
