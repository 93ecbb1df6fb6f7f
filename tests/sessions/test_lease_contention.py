"""Leased runtimes (the Postgres world): a delivery another process's lease kept from running is not stranded."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.harness import fast_options, make_harness, of_type, open_store
from tests.sessions.test_deadline_sweep import TIMEOUT_AGENT

pytestmark = pytest.mark.anyio


async def test_a_delivery_refused_by_a_held_lease_runs_once_the_holder_lets_go(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    h = await make_harness(tmp_path, TIMEOUT_AGENT, options=fast_options(lease_seconds=0.4), store=store)
    sid = await h.create("hello")
    await h.turns(sid, 1)
    deadline = asyncio.get_running_loop().time() + 5
    while await store.acquire(sid, "another-process", 60) is None:  # once this process lets go
        assert asyncio.get_running_loop().time() < deadline, "the lease was never released"
        await asyncio.sleep(0.02)
    delivery = await h.send(sid, "again")  # accepted here, but the other process holds the session
    assert h.rt.actor(sid) is not None  # woken at once: its actor asks for the lease
    deadline = asyncio.get_running_loop().time() + 5
    while h.rt.actor(sid) is not None:  # refused, it ends
        assert asyncio.get_running_loop().time() < deadline, "the actor never let the session go"
        await asyncio.sleep(0.01)
    assert [d.id for d in await store.pending_deliveries(sid)] == [delivery]  # not run, not lost
    assert len(of_type(await h.events(sid), "turn.completed")) == 1
    await store.release(sid, "another-process")  # it stops without running the delivery
    events = await h.turns(sid, 2)
    assert [e["data"]["message"] for e in of_type(events, "message.received")] == ["hello", "again"]
    await h.stop()


async def _until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.01)


async def test_a_session_woken_with_nothing_to_do_lets_its_lease_go_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(tmp_path)
    h = await make_harness(tmp_path, options=fast_options(lease_seconds=15.0), store=store)  # a grace of 1 s
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await h.stop()

    async def free() -> bool:
        if await store.acquire(sid, "another-process", 60) is None:
            return False
        await store.release(sid, "another-process")
        return True

    await _until(free, "the stopped process never let the session go")
    acquired: list[str] = []
    acquire: Callable[[str, str, float], Awaitable[int | None]] = store.acquire

    async def recording(session_id: str, owner: str, ttl: float) -> int | None:
        fence = await acquire(session_id, owner, ttl)
        if fence is not None and owner != "another-process":
            acquired.append(session_id)
        return fence

    monkeypatch.setattr(store, "acquire", recording)
    await h.start()  # its recovery wakes the idle session: the actor takes the lease, finds nothing to do

    async def woken_and_done() -> bool:
        return sid in acquired and h.rt.actor(sid) is None

    await _until(woken_and_done, "the starting process never woke the idle session")
    assert await acquire(sid, "another-process", 60) is not None  # let go as the actor ended, not a grace later
    await store.release(sid, "another-process")
    await h.send(sid, "again")
    events = await h.turns(sid, 2)
    assert [e["data"]["message"] for e in of_type(events, "message.received")] == ["hello", "again"]
    await h.stop()
