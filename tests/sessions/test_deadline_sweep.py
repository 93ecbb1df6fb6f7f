"""Leased runtimes (the Postgres world) fire the deadlines of sessions that no live process scheduled."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from tests.harness import fast_options, make_harness, open_store, types

pytestmark = pytest.mark.anyio

TIMEOUT_AGENT = {
    "agent/agent.py": (
        "from eve_runtime import define_agent\n\n"
        "agent = define_agent(model='test', limits={'session_timeout_ms': 60_000})\n"
    )
}


async def test_a_deadline_scheduled_by_a_stopped_process_fires_in_another(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [1_000_000.0]
    store = await open_store(tmp_path)
    options = fast_options(clock=lambda: now[0], lease_seconds=5.0, deadline_sweep_seconds=0.05)
    survivor = await make_harness(tmp_path / "b", TIMEOUT_AGENT, options=options, store=store)  # started first:
    creator = await make_harness(
        tmp_path / "a", TIMEOUT_AGENT, options=options, store=store
    )  # it never sees the session
    sid = await creator.create("hello")
    await creator.turns(sid, 1)
    await creator.stop()
    assert survivor.rt.actor(sid) is None
    caplog.set_level(logging.INFO, logger="eve.ownership")
    now[0] += 61
    events = await survivor.wait_for(sid, lambda events: events[-1]["type"] == "session.completed")
    assert types(events)[-2:] == ["session.waiting", "session.completed"]
    assert types(events).count("session.completed") == 1
    session = await store.get_session(sid)
    assert session is not None and session.status == "completed"
    assert f"session {sid}: past its deadline and held by no process; waking it" in caplog.messages
    assert await store.expired_sessions(now[0], 10) == []
    await survivor.stop()


async def test_a_deadline_still_ahead_is_left_alone(tmp_path: Path) -> None:
    now = [1_000_000.0]
    store = await open_store(tmp_path)
    options = fast_options(clock=lambda: now[0], lease_seconds=5.0, deadline_sweep_seconds=0.05)
    survivor = await make_harness(tmp_path / "b", TIMEOUT_AGENT, options=options, store=store)
    creator = await make_harness(tmp_path / "a", TIMEOUT_AGENT, options=options, store=store)
    sid = await creator.create("hello")
    await creator.turns(sid, 1)
    await creator.stop()
    now[0] += 30
    await asyncio.sleep(0.3)  # several sweeps
    session = await store.get_session(sid)
    assert session is not None and session.status == "active"
    await survivor.stop()
