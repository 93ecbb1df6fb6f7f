"""What the development server (`eve dev`) serves besides the API, for local tools.

- `GET /eve/v1/dev/sessions` lists every session in the store, newest first (`eve sessions list`).
- `GET /eve/v1/dev/build` tells which generation serves and how the newest rebuild went, so the
  terminal UI can show a reload or a broken save's diagnostics.

They exist only in development mode: under `eve start` they are not routes at all (404).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, get_args

from eve_runtime.project.manifest import Manifest
from eve_runtime.store.base import SessionStatus, Store

__all__ = ["BuildStatus", "list_sessions"]


@dataclass(frozen=True)
class BuildStatus:
    """The serving generation and the outcome of the newest rebuild (`rebuilds` counts every attempt)."""

    generation: int = 0
    rebuilds: int = 0
    failed: bool = False
    diagnostics: list[dict[str, Any]] = field(default_factory=list)

    def next(self, generation: int, failed: Manifest | None) -> BuildStatus:
        """The status after one more rebuild: `failed` is the manifest of a build that failed, if it did."""
        if failed is None:
            return BuildStatus(generation=generation, rebuilds=self.rebuilds + 1)
        entries = [d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in failed.diagnostics]
        return BuildStatus(generation=self.generation, rebuilds=self.rebuilds + 1, failed=True, diagnostics=entries)

    def to_json(self) -> dict[str, Any]:
        """`{generation, rebuilds, status: ready|failed, diagnostics}`."""
        status = "failed" if self.failed else "ready"
        return {
            "generation": self.generation,
            "rebuilds": self.rebuilds,
            "status": status,
            "diagnostics": self.diagnostics,
        }


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
