"""Which sessions a stream reader watches, across every process of one Postgres store.

The session's owner writes a streamed delta at once only for someone reading the stream
(`Store.watched`); on Postgres that reader may be in another process. So a process whose reader
begins to wait for a session's events announces it on the store's watch channel (NOTIFY, payload
the session id), at most once every `ANNOUNCE_EVERY` seconds per session while it keeps waiting,
and every process hears every announcement through its listener. A session counts as watched
for `REMOTE_GRACE` seconds after the last one heard. While the listener was cut off (and for
`REMOTE_GRACE` seconds after), announcements may have been missed: every session counts as
watched, so a reader never loses its prompt first token to a lost notification.

A failed announcement costs the reader nothing but promptness (the deltas are written all the
same, merged a little longer), so it is logged and dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

__all__ = ["ANNOUNCE_EVERY", "REMOTE_GRACE", "Watches"]

logger = logging.getLogger(__name__)

ANNOUNCE_EVERY = 10.0
"""Seconds between two announcements of one session by one process while its readers wait."""

REMOTE_GRACE = 30.0
"""Seconds a session counts as watched after an announcement (longer than `ANNOUNCE_EVERY`)."""

_PRUNE_ABOVE = 4096


class Watches:
    """Announcements of this process's readers, and what every process announced (see the module docstring).

    Args:
        announce: Sends one announcement (NOTIFY on the watch channel) for a session id.
    """

    def __init__(self, announce: Callable[[str], Awaitable[None]]) -> None:
        self._announce = announce
        self._announced: dict[str, float] = {}
        """When this process last announced each session (loop time)."""
        self._heard: dict[str, float] = {}
        """When an announcement of each session was last heard, from any process (loop time)."""
        self._blind_until = float("inf")
        """Until when every session counts as watched: not listening yet, or just after a gap."""
        self._tasks: set[asyncio.Task[None]] = set()

    def listening(self) -> None:
        """The listener hears announcements from now on (it started)."""
        self._blind_until = 0.0

    def gap(self) -> None:
        """The listener reconnected: announcements made meanwhile were missed."""
        self._blind_until = _now() + REMOTE_GRACE

    def reader_waits(self, session_id: str) -> None:
        """A reader in this process waits for the session's events: announce it unless done lately."""
        now = _now()
        last = self._announced.get(session_id)
        if last is not None and now - last < ANNOUNCE_EVERY:
            return
        self._announced[session_id] = now
        self.heard(session_id)  # this process's own owner need not wait for the round trip
        task = asyncio.get_running_loop().create_task(self._send(session_id), name="eve-watch-announce")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def heard(self, session_id: str) -> None:
        """An announcement of the session arrived (from any process, this one included)."""
        now = self._heard[session_id] = _now()
        if len(self._heard) > _PRUNE_ABOVE:  # forget the sessions whose readers left long ago
            self._heard = {key: at for key, at in self._heard.items() if now - at < REMOTE_GRACE}
            self._announced = {key: at for key, at in self._announced.items() if now - at < REMOTE_GRACE}

    def watched(self, session_id: str) -> bool:
        """Whether a reader in any process may be watching the session now."""
        now = _now()
        if now < self._blind_until:
            return True
        heard = self._heard.get(session_id)
        if heard is None:
            return False
        if now - heard < REMOTE_GRACE:
            return True
        del self._heard[session_id]
        self._announced.pop(session_id, None)
        return False

    async def close(self) -> None:
        """Wait for announcements under way (they are quick, or fail)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks))

    async def _send(self, session_id: str) -> None:
        try:
            await self._announce(session_id)
        except Exception as exc:
            logger.debug("could not announce a reader of session %s: %s", session_id, exc)
            self._announced.pop(session_id, None)


def _now() -> float:
    return asyncio.get_running_loop().time()
