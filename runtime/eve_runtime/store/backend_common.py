"""What every store backend shares: payload encoding, event-index checks and the event waiters.

The memory, SQLite and Postgres stores keep the contract the same way here: a delivery payload
is stored as ASCII JSON, a commit's events must continue the session's event count, and a
`wait_for_events` caller is woken through an `EventWaiters` future when a commit adds events.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from eve_runtime.store.base import EventIndexConflict, EventRow, StoreError

__all__ = ["WATCH_GRACE", "EventWaiters", "check_events", "encode_payload"]

WATCH_GRACE = 5.0
"""Seconds a session counts as watched after its last `wait_for_events` began: a stream reader
sends what it read between two waits."""


def encode_payload(payload: dict[str, Any]) -> str:
    """Serialize a delivery payload as ASCII JSON, so lone surrogates and NULs round-trip exactly.

    Raises:
        StoreError: The payload is not JSON data.
    """
    try:
        return json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"A delivery payload must be JSON data: {exc}") from exc


class EventWaiters:
    """Futures of `wait_for_events` callers, per session, woken when a commit adds events.

    Everything runs on the store's event loop; a writer thread reaches it through
    `loop.call_soon_threadsafe(waiters.notify, ...)`.
    """

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Future[bool]]] = {}
        self._waited: dict[str, float] = {}
        """When (loop time) a waiter of each session was last added (see `watched`)."""

    def add(self, session_id: str) -> asyncio.Future[bool]:
        """Register a waiter for the session's next commit with events (it resolves True then)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        self._waiters.setdefault(session_id, set()).add(future)
        self._waited[session_id] = loop.time()
        return future

    def watched(self, session_id: str) -> bool:
        """Whether a reader waits for the session's events now, or began a wait in the last `WATCH_GRACE` seconds."""
        if session_id in self._waiters:
            return True
        waited = self._waited.get(session_id)
        if waited is None:
            return False
        if asyncio.get_running_loop().time() - waited < WATCH_GRACE:
            return True
        del self._waited[session_id]
        return False

    def discard(self, session_id: str, future: asyncio.Future[bool]) -> None:
        """Forget a waiter (after it woke or timed out)."""
        waiting = self._waiters.get(session_id)
        if waiting is not None:
            waiting.discard(future)
            if not waiting:
                del self._waiters[session_id]

    def notify(self, session_ids: Iterable[str]) -> None:
        """Wake every waiter of these sessions."""
        for session_id in session_ids:
            for future in self._waiters.pop(session_id, ()):
                if not future.done():
                    future.set_result(True)

    def notify_all(self) -> None:
        """Wake every waiter of every session (they re-read what they wait for)."""
        self.notify(list(self._waiters))

    async def wait_for_count(
        self, session_id: str, known: int, timeout: float, count: Callable[[], Awaitable[int]]
    ) -> int:
        """`Store.wait_for_events` over `count()`: the session's event count once above `known`, else `known`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            # Register before reading, so a commit between the read and the wait still wakes us.
            future = self.add(session_id)
            try:
                current = await count()
                if current > known:
                    return current
                if not await self.wait(future, deadline - loop.time()):
                    return known
            finally:
                self.discard(session_id, future)

    async def wait(self, future: asyncio.Future[bool], timeout: float) -> bool:
        """Wait for a registered future; False when `timeout` seconds passed first.

        The future is awaited itself, with a timer that resolves it False: a commit's notify then
        resumes the reader in the next turn of the loop (`asyncio.wait_for` would take two more).
        """
        if timeout <= 0 or future.done():
            return future.done() and future.result()
        timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
        try:
            return await future
        finally:
            timer.cancel()


def _expire(future: asyncio.Future[bool]) -> None:
    if not future.done():
        future.set_result(False)


def check_events(session_id: str, count: int, events: Iterable[EventRow]) -> None:
    """Validate a commit's events against the session's event count.

    Raises:
        EventIndexConflict: The first index is not `count`.
        StoreError: The indexes are not consecutive.
    """
    for offset, event in enumerate(events):
        if event.index != count + offset:
            if offset == 0:
                raise EventIndexConflict(
                    f"Session {session_id!r} has {count} events, so the next event index is {count}, "
                    f"not {event.index}: another writer appended first, or this writer is stale."
                )
            raise StoreError(
                f"The events of one commit must have consecutive indexes: got {event.index} after {count + offset - 1}."
            )
