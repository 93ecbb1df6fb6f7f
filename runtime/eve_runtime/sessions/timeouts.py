"""Session timeouts and wakes, fired from one timer.

Every session with a deadline (its `session_timeout_ms`) and every actor that leaves a session
waiting on a clock (a task's or a wait's timeout) puts one entry in a heap; a single task sleeps
until the earliest is due, then hands each due session to the runtime, which wakes its actor (the
actor decides what is due: an entry is a reason to look, never a command). Entries are never
removed: one for a session that ended or moved on costs a store read when it fires.

The heap holds what this process saw. When many processes share the store, a session's timeout
that only a process now gone had scheduled is found by the deadline sweep of `eve_runtime.sessions.ownership`.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable, Callable

from eve_runtime.store.base import SessionRecord

__all__ = ["SessionTimeouts"]


class SessionTimeouts:
    """The heap of `(when, session id)` and the timer that fires it; see the module docstring."""

    def __init__(self, clock: Callable[[], float], fire: Callable[[str], Awaitable[None]]) -> None:
        self._clock = clock
        self._fire = fire
        self._deadlines: list[tuple[float, str]] = []
        self.changed = asyncio.Event()
        """Set when an entry was added: the timer looks at the heap (and the clock) again."""

    def schedule(self, session_id: str, at: float) -> None:
        """Fire `session_id` at `at`."""
        heapq.heappush(self._deadlines, (at, session_id))
        self.changed.set()

    def schedule_deadline(self, session: SessionRecord) -> None:
        """Fire the session at its deadline, if it has one."""
        if session.deadline is not None:
            self.schedule(session.id, session.deadline)

    async def run(self) -> None:
        """Fire every entry when it is due, until cancelled."""
        while True:
            self.changed.clear()
            timeout = None
            if self._deadlines:
                timeout = max(0.0, self._deadlines[0][0] - self._clock())
            try:
                await asyncio.wait_for(self.changed.wait(), timeout=timeout)
                continue
            except TimeoutError:
                pass
            now = self._clock()
            while self._deadlines and self._deadlines[0][0] <= now:
                _deadline, session_id = heapq.heappop(self._deadlines)
                await self._fire(session_id)
