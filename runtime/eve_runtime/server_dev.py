"""What the development server (`eve dev`) serves besides the API: `GET /eve/v1/dev/sessions`.

The route lists every session in the store, newest first, for local tools (`eve sessions list`).
It exists only in development mode: under `eve start` it is not a route at all (404).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, get_args

from eve_runtime.store.base import SessionStatus, Store

__all__ = ["list_sessions"]


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def list_sessions(store: Store) -> list[dict[str, Any]]:
    """Every session of the store as `{sessionId, status, createdAt (ISO 8601), agent}`, newest first."""
    records = [record for status in get_args(SessionStatus) for record in await store.list_sessions(status)]
    records.sort(key=lambda record: (record.created_at, record.id), reverse=True)
    return [
        {"sessionId": record.id, "status": record.status, "createdAt": _iso(record.created_at), "agent": record.agent}
        for record in records
    ]
