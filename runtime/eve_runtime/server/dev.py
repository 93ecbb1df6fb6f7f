"""What the development server (`eve dev`) serves besides the API, for local tools.

- `GET /eve/v1/dev/sessions` lists every session in the store, newest first (`eve sessions list`,
  the terminal UI's `/sessions`), each with its `state` (what it is doing now: `running`,
  `waiting-for-input`, `idle`, `dormant`, `stranded` or `ended`), a `preview` of its first message
  and its `usage` (the newest total a `turn.waiting` or `session.*` event reported; `{}` before one).
- `GET /eve/v1/dev/build` tells which generation serves and how the newest rebuild went, so the
  terminal UI can show a reload or a broken save's diagnostics.
- `POST /eve/v1/dev/schedules/{scheduleId}` fires a schedule once, by hand, and answers
  `{scheduleId, sessionIds}` (`eve schedules run`, the terminal UI's `/schedule`, the inspector);
  `eve dev` never fires schedules on their cadence. A nested name is `billing/sweep` (or
  `billing%2Fsweep`). An unknown one is a 404 `schedule_not_found` listing `availableScheduleIds`.

They exist only in development mode: under `eve start` they are not routes at all (404), except
that `eve start --inspector` serves the two reads (sessions, build) behind the bearer token.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from eve_runtime.project.manifest import Manifest
from eve_runtime.server.responses import ApiError
from eve_runtime.sessions.availability import Availability
from eve_runtime.sessions.schedules import ScheduleFailed, ScheduleTimer, UnknownSchedule
from eve_runtime.store.base import SessionRecord, SessionStatus, Store

__all__ = ["BuildStatus", "SessionState", "fire_schedule", "list_sessions"]

logger = logging.getLogger("eve.server")

SessionState = Literal["running", "waiting-for-input", "idle", "dormant", "stranded", "ended"]
_PREVIEW = 80
"""Characters of the first message a listing shows."""
_STATE_EVENTS: dict[str, SessionState] = {
    "message.received": "running",  # a message arrived: its turn starts next
    "turn.started": "running",
    "turn.waiting": "running",  # on tasks; on input it is `waiting-for-input` (read below)
    "turn.completed": "idle",
    "turn.failed": "idle",
    "turn.cancelled": "idle",
    "session.waiting": "idle",
    "session.completed": "ended",
    "session.failed": "ended",
}
_USAGE_EVENTS = frozenset({"turn.waiting", "session.waiting", "session.completed", "session.failed"})


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


def _preview(message: Any) -> str:
    """A message's text on one line (the text parts of a multi-part message), cut at `_PREVIEW` characters."""
    if isinstance(message, list):
        message = " ".join(str(part.get("text", "")) for part in message if isinstance(part, dict))
    text = " ".join(str(message or "").split())
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


async def _describe(store: Store, record: SessionRecord, availability: Availability) -> dict[str, Any]:
    """What a listing says of one session: the record's fields, its state now and its first message."""
    rows = await store.read_events(record.id)
    preview = ""
    for row in rows:
        if row.type == "message.received":
            preview = _preview(json.loads(row.line).get("data", {}).get("message"))
            break
    state: SessionState = "idle"
    for row in reversed(rows):
        found = _STATE_EVENTS.get(row.type)
        if found is None:
            continue
        state = found
        if row.type == "turn.waiting" and json.loads(row.line).get("data", {}).get("on") == "input":
            state = "waiting-for-input"
        break
    usage: Any = {}
    for row in reversed(rows):
        if row.type in _USAGE_EVENTS:
            usage = json.loads(row.line).get("data", {}).get("usage") or {}
            break
    if record.status != "active":
        state = "ended"
    elif availability.stranded(record):
        state = "stranded"
    elif availability.dormant(record):
        state = "dormant"
    return {
        "sessionId": record.id,
        "status": record.status,
        "state": state,
        "createdAt": _iso(record.created_at),
        "agent": record.agent,
        "preview": preview,
        "usage": usage,
    }


async def list_sessions(store: Store, availability: Availability | None = None) -> list[dict[str, Any]]:
    """Every session of the store, newest first: `{sessionId, status, state, createdAt, agent, preview, usage}`.

    `status` is the stored one (`active`, `completed`, `failed`, `reset`); `state` is what the
    session does now (see the module docstring); `availability` tells dormant and stranded ones.
    """
    latest: dict[str, SessionRecord] = {}
    for status in get_args(SessionStatus):  # `active` first: a session that ends meanwhile shows its end
        latest.update((record.id, record) for record in await store.list_sessions(status))
    records = sorted(latest.values(), key=lambda record: (record.created_at, record.id), reverse=True)
    availability = availability or Availability()
    return [await _describe(store, record, availability) for record in records]


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
