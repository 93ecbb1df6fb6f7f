"""The schedule timer: each fire time of each schedule runs once, across restarts and processes.

`eve start` runs one timer per process (`eve dev` none: there schedules fire only by hand, as in
eve). It sleeps until the next fire time of any schedule (5-field cron, UTC, whole minutes), then
*claims* that fire time in the store (`Store.claim_schedule_fire`): of all the processes sharing
the store, the one whose claim succeeds runs the fire (`eve_runtime.sessions.schedule_fire`), the
others do nothing. A claim is refused for a fire time at or before the schedule's last claimed
one, so a restarted process, or one whose clock lags, never runs a fire time again.

**Missed fires.** When the timer starts, each schedule's latest fire time at or before now is
either run or dropped, by the schedule's `missed` policy:

- `latest` (default): it is claimed; when the claim succeeds and the schedule had fired before,
  that fire time was missed while no server ran, and it runs now, once (the earlier missed ones
  do not). A schedule that never fired before has nothing to catch up: the claim just records
  where it starts.
- `skip`: nothing runs; the next fire time is the first.

When the process wakes up late (a machine that slept) and several fire times of one schedule are
due at once, only the latest runs.

A fire is claimed before it runs, so a process that dies between the claim and starting the
fire's session loses that fire (at most once, never twice). The sessions a prompt starts are
durable from then on and finish after any crash, like every session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Coroutine
from typing import Any, Protocol

from eve_runtime.authoring.schedules import Schedule, fires_after, latest_fire
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.errors import UserError
from eve_runtime.sessions.schedule_fire import FireHost, ScheduleFailed, fire, fire_time
from eve_runtime.store.base import Store, StoreError

__all__ = ["ScheduleFailed", "ScheduleHost", "ScheduleTimer", "UnknownSchedule"]

logger = logging.getLogger("eve.schedules")


class UnknownSchedule(UserError):
    """No schedule has this name (`available` lists the ones there are)."""

    def __init__(self, name: str, available: list[str]) -> None:
        known = ", ".join(available) if available else "none (add one in agent/schedules/)"
        super().__init__(f"The app has no schedule {name!r}. Its schedules: {known}.")
        self.name = name
        self.available = available


class ScheduleHost(FireHost, Protocol):
    """The runtime, as the schedule timer uses it."""

    @property
    def store(self) -> Store: ...

    @property
    def options(self) -> RuntimeOptions: ...


class ScheduleTimer:
    """The schedules of one runtime: the timer that fires them on the clock, and fires by hand."""

    def __init__(self, runtime: ScheduleHost) -> None:
        self.runtime = runtime
        self.changed = asyncio.Event()
        """Set it to make the timer look at the clock (and the schedules) again."""
        self._cursors: dict[str, float] = {}
        """Per schedule: fire times up to here have been seen (claimed, run or left to others)."""
        self._task: asyncio.Task[None] | None = None
        self._fires: set[asyncio.Task[None]] = set()
        self._looked_at = -math.inf
        self._looked = asyncio.Event()

    def _now(self) -> float:
        return self.runtime.options.clock()

    def _schedules(self) -> dict[str, Schedule]:
        return self.runtime.agent.schedules

    # -- by hand ---------------------------------------------------------------------------------

    async def fire_now(self, name: str) -> list[str]:
        """Fire a schedule once now, by hand (outside its cadence); the ids of the sessions it reached.

        Raises:
            UnknownSchedule: There is no schedule `name`.
            ScheduleFailed: Its run handler failed.
        """
        schedule = self._schedules().get(name)
        if schedule is None:
            raise UnknownSchedule(name, sorted(self._schedules()))
        session_ids = await fire(self.runtime, name, schedule, self._now(), manual=True)
        logger.info("schedule %s fired by hand: session(s) %s", name, ", ".join(session_ids) or "none")
        return session_ids

    # -- on the clock ----------------------------------------------------------------------------

    def start(self) -> None:
        """Run the missed fires due at start (by each schedule's policy), then fire on the clock."""
        self._task = asyncio.create_task(self._run(self._now()), name="eve-schedules")

    async def stop(self) -> None:
        """Stop the timer and the fires still running (a prompt's session, once created, runs on)."""
        tasks = [t for t in [self._task, *self._fires] if t is not None]
        self._task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def abort(self) -> None:
        """Stop at once, as a kill would."""
        for task in [self._task, *self._fires]:
            if task is not None:
                task.cancel()
        self._task = None

    async def settle(self) -> None:
        """Wait until the timer has looked at the clock as it reads now, and the fires it started have run.

        Tests move a virtual clock, then settle: no timing is involved. Returns at once when the
        timer does not run (`eve dev`).
        """
        target = self._now()
        while self._task is not None and self._looked_at < target:
            if self._task.done():
                self._task.result()  # the timer failed: say why
                return
            self._looked.clear()
            self.changed.set()
            waiting = asyncio.ensure_future(self._looked.wait())
            await asyncio.wait([waiting, self._task], return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
        while self._fires:
            await asyncio.gather(*list(self._fires), return_exceptions=True)

    async def _run(self, started: float) -> None:
        await self._catch_up(started)
        while True:
            self.changed.clear()
            now = self._now()
            for name, schedule in self._schedules().items():
                cursor = self._cursors.setdefault(name, now)  # a schedule new to this build starts now
                due = latest_fire(schedule.cron, now)
                if due > cursor:
                    self._cursors[name] = due
                    self._spawn(self._claim_and_fire(name, schedule, due))
            self._looked_at = now
            self._looked.set()
            upcoming = [fires_after(s.cron, now)[0] for s in self._schedules().values()]
            timeout = max(0.0, min(upcoming) - self._now()) if upcoming else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=timeout)

    async def _catch_up(self, now: float) -> None:
        for name, schedule in self._schedules().items():
            self._cursors[name] = now
            if schedule.missed != "latest":
                continue
            latest = latest_fire(schedule.cron, now)
            try:
                claim = await self.runtime.store.claim_schedule_fire(name, latest)
            except StoreError as exc:
                logger.warning("schedule %s: cannot look for a missed fire (%s)", name, exc)
                continue
            if claim.claimed and claim.previous is not None:
                logger.info("schedule %s: running its fire of %s, missed while no server ran", name, fire_time(latest))
                self._spawn(self._fire_logged(name, schedule, latest))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._fires.add(task)
        task.add_done_callback(self._fires.discard)

    async def _claim_and_fire(self, name: str, schedule: Schedule, at: float) -> None:
        try:
            claim = await self.runtime.store.claim_schedule_fire(name, at)
        except StoreError as exc:
            logger.warning(
                "schedule %s: cannot claim its fire of %s, so it does not run (%s)", name, fire_time(at), exc
            )
            return
        if claim.claimed:
            await self._fire_logged(name, schedule, at)
        else:
            logger.debug("schedule %s: its fire of %s runs in another process", name, fire_time(at))

    async def _fire_logged(self, name: str, schedule: Schedule, at: float) -> None:
        try:
            session_ids = await fire(self.runtime, name, schedule, at, manual=False)
        except ScheduleFailed as exc:
            logger.error("%s (the fire of %s failed)", exc, fire_time(at), exc_info=exc.__cause__)
            return
        logger.info("schedule %s fired (%s): session(s) %s", name, fire_time(at), ", ".join(session_ids) or "none")
