"""The store contract for deadlines nobody fires: `expired_sessions`, run against every backend."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from eve_runtime.store import Commit, Store
from tests.store.conftest import session

pytestmark = pytest.mark.anyio

NOW = 1_000_000.0


async def _create(store: Store, name: str, deadline: float | None) -> None:
    await store.create_session(dataclasses.replace(session(name), deadline=deadline))


async def test_expired_sessions_are_active_past_their_deadline_and_unheld(store: Store) -> None:
    await _create(store, "later", NOW + 10)
    await _create(store, "never", None)
    await _create(store, "second", NOW - 5)
    await _create(store, "first", NOW - 50)
    await _create(store, "exactly", NOW)
    await _create(store, "ended", NOW - 100)
    await store.commit("ended", Commit(status="completed"))
    await _create(store, "held", NOW - 100)
    assert await store.acquire("held", "A", ttl=30) == 1
    await _create(store, "released", NOW - 20)
    assert await store.acquire("released", "A", ttl=30) == 1
    await store.release("released", "A")
    await _create(store, "lapsed", NOW - 10)
    assert await store.acquire("lapsed", "A", ttl=0.05) == 1
    await asyncio.sleep(0.1)
    assert await store.expired_sessions(NOW, 100) == ["first", "released", "lapsed", "second", "exactly"]
    assert await store.expired_sessions(NOW, 2) == ["first", "released"]
    assert await store.expired_sessions(NOW - 60, 100) == []
    assert await store.acquire("lapsed", "B", ttl=30) == 2  # a live owner holds it again
    assert await store.expired_sessions(NOW, 100) == ["first", "released", "second", "exactly"]
    await store.release("held", "A")
    assert (await store.expired_sessions(NOW, 1)) == ["held"]
