"""`eve_runtime.keyed_locks`: one lock per key, dropped only when nobody holds or waits for it."""

from __future__ import annotations

import asyncio

import pytest

from eve_runtime.keyed_locks import KeyedLocks

pytestmark = pytest.mark.anyio


async def test_holders_of_one_key_take_turns_and_the_lock_goes_with_the_last() -> None:
    locks = KeyedLocks()
    inside: list[str] = []
    overlaps = 0

    async def work(name: str) -> None:
        nonlocal overlaps
        async with locks.hold("s1"):
            overlaps += bool(inside)
            inside.append(name)
            await asyncio.sleep(0)  # waiters queue up meanwhile; the lock must stay theirs
            inside.remove(name)

    async with locks.hold("other"):
        await asyncio.gather(*(work(str(i)) for i in range(10)))
        assert len(locks) == 1  # only "other" is still held
    assert overlaps == 0 and len(locks) == 0
