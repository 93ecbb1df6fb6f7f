"""Rows of the SQL stores' `sessions` and `deliveries` tables as records (shared by SQLite and Postgres).

Both stores select the same columns in the same order; strings a caller chooses (operation ids,
idempotency keys) come back as text from SQLite and as UTF-8 bytes from Postgres.
"""

from __future__ import annotations

import json
from typing import Any, cast

from eve_runtime.store.base import DeliveryKind, DeliveryRecord, SessionRecord, SessionStatus

__all__ = ["DELIVERY_COLUMNS", "SESSION_COLUMNS", "delivery_from_row", "session_from_row", "session_values", "text_of"]

SESSION_COLUMNS = "id, agent, created_at, eve_version, status, deadline, operation_id, deployment"
DELIVERY_COLUMNS = "id, session_id, seq, kind, payload, idempotency_key, created_at, consumed"


def text_of(value: str | bytes | memoryview) -> str:
    """A stored string (text, or its UTF-8 encoding with lone surrogates kept)."""
    return value if isinstance(value, str) else bytes(value).decode("utf-8", "surrogatepass")


def session_from_row(row: tuple[Any, ...]) -> SessionRecord:
    """A `sessions` row (`SESSION_COLUMNS`) as a record."""
    return SessionRecord(
        id=row[0],
        agent=row[1],
        created_at=row[2],
        eve_version=row[3],
        status=cast(SessionStatus, row[4]),
        deadline=row[5],
        operation_id=None if row[6] is None else text_of(row[6]),
        deployment=row[7],
    )


def session_values(record: SessionRecord, operation: object) -> tuple[Any, ...]:
    """A record as the values of `SESSION_COLUMNS`, with its operation id already encoded as `operation`."""
    return (
        record.id,
        record.agent,
        record.created_at,
        record.eve_version,
        record.status,
        record.deadline,
        operation,
        record.deployment,
    )


def delivery_from_row(row: tuple[Any, ...]) -> DeliveryRecord:
    """A `deliveries` row (`DELIVERY_COLUMNS`) as a record."""
    return DeliveryRecord(
        id=row[0],
        session_id=row[1],
        seq=int(row[2]),
        kind=cast(DeliveryKind, row[3]),
        payload=json.loads(row[4]),
        idempotency_key=None if row[5] is None else text_of(row[5]),
        created_at=row[6],
        consumed=bool(row[7]),
    )
