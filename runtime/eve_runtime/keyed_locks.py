"""One asyncio lock per key (a session id), kept only while someone holds or waits for it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """Locks by key, reference-counted: a key's lock exists while a holder or a waiter uses it.

    ```python
    async with locks.hold(session_id):
        ...  # nobody else holds session_id's lock here
    ```
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def __len__(self) -> int:
        """How many keys are held or waited for."""
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold `key`'s lock for the block (waiting for the current holder first)."""
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
