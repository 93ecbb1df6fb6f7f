"""Reading a session's stored events in process: the code behind `eve_runtime.sessions`.

The runtime binds its store here (`bind_store`); `attach` reads whichever store is bound.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from eve_runtime.errors import RuntimeFailure
from eve_runtime.store.base import Store

__all__ = [
    "AttachedSession",
    "UnknownSession",
    "attach",
    "bind_store",
    "current_store",
    "unbind_default",
]

_CURRENT: ContextVar[Store | None] = ContextVar("eve_session_store", default=None)
_default: list[Store] = []
"""Stores of running runtimes, the newest last (used outside a runtime's own tasks)."""

_BATCH = 512
_POLL = 1.0


class UnknownSession(RuntimeFailure):
    """`sessions.attach(id)` named a session the store does not have."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"There is no session {session_id!r}.")
        self.session_id = session_id


def bind_store(store: Store, *, default: bool = False) -> None:
    """Make `store` the one `sessions` reads: in the current context, and with `default` process-wide.

    The runtime calls this; user code never needs to.
    """
    _CURRENT.set(store)
    if default:
        _default.append(store)


def unbind_default(store: Store) -> None:
    """A stopped runtime's store is no longer the process-wide default."""
    if store in _default:
        _default.remove(store)


def current_store() -> Store:
    """The store `sessions` reads (see the module docstring)."""
    store = _CURRENT.get()
    if store is None and _default:
        store = _default[-1]
    if store is None:
        raise RuntimeError("eve_runtime.sessions works only in code the eve runtime runs (no runtime is running)")
    return store


@dataclass(frozen=True)
class AttachedSession:
    """One session's stored stream, read in process."""

    session_id: str
    store: Store

    async def stream(
        self, start_index: int = 0, *, follow: bool = True, timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The session's events from `start_index` (see the module docstring).

        Raises:
            UnknownSession: There is no such session.
            TimeoutError: `timeout` seconds passed before the read ended.
        """
        store = self.store
        if await store.get_session(self.session_id) is None:
            raise UnknownSession(self.session_id)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        count = await store.event_count(self.session_id)
        index = max(0, count + start_index) if start_index < 0 else start_index
        end = None if follow else count
        while True:
            limit = count if end is None else min(count, end)
            while index < limit:
                rows = await store.read_events(self.session_id, index, min(limit, index + _BATCH))
                if not rows:
                    break
                for row in rows:
                    yield json.loads(row.line)
                index = rows[-1].index + 1
                _check(deadline, loop)
            if end is not None and index >= end:
                return
            record = await store.get_session(self.session_id)
            if record is not None and record.status != "active":
                count = await store.event_count(self.session_id)
                if index >= count:
                    return  # ended, and everything it wrote was read
                continue
            wait = _POLL if deadline is None else min(_POLL, deadline - loop.time())
            _check(deadline, loop)
            count = await store.wait_for_events(self.session_id, index, max(0.0, wait))


def _check(deadline: float | None, loop: asyncio.AbstractEventLoop) -> None:
    if deadline is not None and loop.time() >= deadline:
        raise TimeoutError("the session read did not end in time")


def attach(session_id: str) -> AttachedSession:
    """A handle on the session's stream (nothing is read until `stream()` is iterated)."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("sessions.attach: session_id must be a non-empty string")
    return AttachedSession(session_id, current_store())
