"""`sessions.attach(id).stream(...)`: reading a session's stored events in process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from eve_runtime import sessions
from eve_runtime.sessions.reader import UnknownSession
from tests.harness import Harness, last_reply, make_harness

pytestmark = pytest.mark.anyio


async def collect(session_id: str, **options: Any) -> list[dict[str, Any]]:
    return [event async for event in sessions.attach(session_id).stream(**options)]


async def test_a_bounded_read_returns_the_stored_events(harness: Harness) -> None:
    sid = await harness.create("hello")
    events = await harness.turns(sid, 1)
    assert await collect(sid, follow=False) == events
    assert await collect(sid, start_index=2, follow=False) == events[2:]
    assert await collect(sid, start_index=-1, follow=False) == events[-1:]
    assert await collect(sid, start_index=-999, follow=False) == events
    assert await collect(sid, start_index=999, follow=False) == []


async def test_follow_yields_new_events_until_the_session_ends(harness: Harness) -> None:
    sid = await harness.create("hello")
    await harness.turns(sid, 1)
    reader = asyncio.create_task(collect(sid, start_index=-1, follow=True))
    await asyncio.sleep(0.05)
    assert not reader.done()  # it waits for more
    await harness.send(sid, "again")
    await harness.turns(sid, 2)
    await harness.rt.reset(sid)
    followed = await asyncio.wait_for(reader, 5)
    events = await harness.events(sid)
    first_waiting = [e["type"] for e in events].index("session.waiting")
    assert followed == events[first_waiting:]
    assert followed[-1]["type"] == "session.completed"


async def test_follow_stops_at_a_timeout(harness: Harness) -> None:
    sid = await harness.create("hello")
    await harness.turns(sid, 1)
    with pytest.raises(TimeoutError):
        await collect(sid, follow=True, timeout=0.1)


async def test_an_unknown_session_is_refused(harness: Harness) -> None:
    with pytest.raises(UnknownSession):
        await collect("wrun_nothing", follow=False)


TOOL = {
    "agent/tools/count_events.py": '''
from eve_runtime import ToolContext, sessions

async def count_events(ctx: ToolContext) -> dict:
    """Count this session's durable events."""
    kinds = [e["type"] async for e in sessions.attach(ctx.session.id).stream(follow=False)]
    return {"count": len(kinds), "first": kinds[0]}
''',
}


async def test_a_tool_reads_its_own_session_in_process(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, TOOL)
    sid = await h.create("/call count_events {}")
    events = await h.turns(sid, 1)
    await h.stop()
    reply = last_reply(events)
    assert reply.startswith('count_events -> {"count":') and '"first":"session.started"' in reply
