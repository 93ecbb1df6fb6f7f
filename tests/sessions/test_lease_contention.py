"""Leased runtimes (the Postgres world): a delivery another process's lease kept from running is not stranded."""

from __future__ import annotations

import asyncio
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
