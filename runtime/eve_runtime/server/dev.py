"""What the development server (`eve dev`) serves besides the API, for local tools.

- `GET /eve/v1/dev/sessions` lists every session in the store, newest first (`eve sessions list`).
- `GET /eve/v1/dev/build` tells which generation serves and how the newest rebuild went, so the
  terminal UI can show a reload or a broken save's diagnostics.
- `POST /eve/v1/dev/schedules/{scheduleId}` fires a schedule once, by hand, and answers
  `{scheduleId, sessionIds}` (`eve schedules run`, the terminal UI's `/schedule`, the inspector);
  `eve dev` never fires schedules on their cadence. A nested name is `billing/sweep` (or
  `billing%2Fsweep`). An unknown one is a 404 `schedule_not_found` listing `availableScheduleIds`.

They exist only in development mode: under `eve start` they are not routes at all (404).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, get_args

from eve_runtime.project.manifest import Manifest
from eve_runtime.server.responses import ApiError
from eve_runtime.sessions.schedules import ScheduleFailed, ScheduleTimer, UnknownSchedule
from eve_runtime.store.base import SessionRecord, SessionStatus, Store

__all__ = ["BuildStatus", "fire_schedule", "list_sessions"]

logger = logging.getLogger("eve.server")


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
    latest: dict[str, SessionRecord] = {}
    for status in get_args(SessionStatus):  # `active` first: a session that ends meanwhile shows its end
        latest.update((record.id, record) for record in await store.list_sessions(status))
    records = sorted(latest.values(), key=lambda record: (record.created_at, record.id), reverse=True)
    return [
        {"sessionId": record.id, "status": record.status, "createdAt": _iso(record.created_at), "agent": record.agent}
        for record in records
    ]


async def fire_schedule(schedules: ScheduleTimer, schedule_id: str) -> dict[str, Any]:
    """Fire a schedule by hand: `{ok, scheduleId, sessionIds}`.

    Raises:
        ApiError: 404 `schedule_not_found` (with `availableScheduleIds`) for an unknown id; 500
            `schedule_failed` when its run handler failed (the app's code: logged).
    """
    try:
        session_ids = await schedules.fire_now(schedule_id)
    except UnknownSchedule as exc:
        raise ApiError(404, str(exc), "schedule_not_found", extra={"availableScheduleIds": exc.available}) from None
    except ScheduleFailed as exc:
        logger.error("%s", exc, exc_info=exc.__cause__)
        raise ApiError(500, str(exc), "schedule_failed") from None
    return {"ok": True, "scheduleId": schedule_id, "sessionIds": session_ids}
