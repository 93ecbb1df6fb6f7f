"""Firing one schedule without a server: `eve schedules run NAME` when no `eve dev` runs for the app.

It does in this process what the dev route does in a server's: compile the app, open the local
world's store (one process per store: while `eve dev` or `eve start` serves it, this refuses and
says so), fire the schedule once, by hand, and wait until each session it reached has ended its
turn. Sessions of earlier runs stay dormant here (as under `eve dev` without `--resume`), so
nothing but the fire runs. A turn parked on a person is left parked for the next server.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from eve_runtime.errors import CompileError
from eve_runtime.project.compiler import compile_app
from eve_runtime.project.paths import load_env_files
from eve_runtime.serving import event_loop
from eve_runtime.serving.serve import ServeError
from eve_runtime.serving.worlds import WorldUnavailable, open_world
from eve_runtime.sessions.runtime import Runtime
from eve_runtime.store.base import Store

__all__ = ["FiredSession", "fire_schedule"]

_TURN_ENDS = ("session.waiting", "session.completed", "session.failed")


@dataclass(frozen=True)
class FiredSession:
    """A session a fire reached, as it stood when its turn ended (or the wait gave up)."""

    session_id: str
    ended: bool
    """Whether its turn ended (False: it was still running, or parked, when the wait gave up)."""
    reply: str | None
    """Its last answer, if it gave one."""
    error: str | None = None
    """Why its turn failed, if it did."""


def fire_schedule(app_root: Path, name: str, *, timeout: float = 300.0) -> list[FiredSession]:
    """Fire the schedule `name` of the app at `app_root` once, in this process, on the local world.

    Raises:
        CompileError: The app has error diagnostics.
        ServeError: The local store is in use by a server (talk to that server instead).
        UnknownSchedule: The app has no such schedule.
        ScheduleFailed: Its run handler failed.
    """
    load_env_files(app_root)
    compiled = compile_app(app_root)
    if compiled.root is None:
        raise CompileError(compiled.diagnostics)
    root = compiled.root
    data_dir = compiled.paths.workflow_data_dir

    async def main() -> list[FiredSession]:
        try:
            store = await open_world("local", None, data_dir)
        except WorldUnavailable as exc:
            raise ServeError(f"{exc}\nWhile a server runs, fire the schedule through it (eve dev).") from None
        runtime = Runtime(root, store, mode="development", dormant_before=time.time())
        try:
            await runtime.start()
            session_ids = await runtime.schedules.fire_now(name)
            return [await _outcome(store, session_id, time.monotonic() + timeout) for session_id in session_ids]
        finally:
            await runtime.stop()
            await store.close()

    return event_loop.run(main())


async def _outcome(store: Store, session_id: str, deadline: float) -> FiredSession:
    """Wait (on the store) until the session's turn ends or `deadline` passes; how it stood then."""
    while True:
        events = [json.loads(row.line) for row in await store.read_events(session_id)]
        ended = bool(events) and events[-1]["type"] in _TURN_ENDS
        remaining = deadline - time.monotonic()
        if ended or remaining <= 0:
            break
        await store.wait_for_events(session_id, len(events), min(remaining, 1.0))
    replies = [
        e["data"].get("message")
        for e in events
        if e["type"] == "message.completed" and e["data"].get("finishReason") != "tool-calls"
    ]
    failures = [e["data"] for e in events if e["type"] == "turn.failed"]
    error = f"{failures[-1].get('code')}: {failures[-1].get('message')}" if failures else None
    return FiredSession(session_id, ended, replies[-1] if replies else None, error)
