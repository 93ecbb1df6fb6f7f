"""Schedules that fire: the runtime's schedule timer, on a virtual clock.

The clock (`RuntimeOptions.clock`) is a list the test moves forward; `rt.schedules.settle()`
waits until the timer has looked at the clock and the fires it started have created their
sessions, so nothing here depends on how long anything takes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from eve_runtime.sessions.runtime import Runtime
from eve_runtime.sessions.schedules import ScheduleFailed, UnknownSchedule
from eve_runtime.store import SessionRecord, SessionStatus, Store
from tests.harness import Harness, fast_options, make_harness, of_type, open_store

pytestmark = pytest.mark.anyio

T0 = 1_767_603_600.0  # 2026-01-05 09:00:00 UTC, a whole minute
MINUTE = 60.0

TICK = {"agent/schedules/tick.md": "---\ncron: '* * * * *'\n---\n/reply tick done\n"}
SKIPPING = {"agent/schedules/tick.md": "---\ncron: '* * * * *'\nmissed: skip\n---\n/reply tick done\n"}
WHOAMI = {
    "agent/tools/whoami.py": (
        "from eve_runtime import ToolContext\n\n\n"
        "def whoami(ctx: ToolContext) -> dict:\n"
        '    """Who runs this turn."""\n'
        '    return {"principal": ctx.session.principal_id}\n'
    ),
    "agent/channels/webhook.py": "from eve_runtime import define_channel\n\nchannel = define_channel()\n",
}
HANDLERS = {
    **WHOAMI,
    "agent/schedules/digest.py": (
        "from eve_runtime import define_schedule\n\n\n"
        "async def digest(ctx):\n"
        '    await ctx.to("webhook", "digest").send("/call whoami {}", auth=ctx.app_auth)\n\n\n'
        'schedule = define_schedule(cron="0 * * * *", run=digest)\n'
    ),
    "agent/schedules/poke.py": (
        "from eve_runtime import define_schedule\n\n\n"
        "def poke(ctx):\n"
        '    ctx.wait_until(ctx.to("webhook", f"poke-{ctx.manual}").send("/reply poked"))\n\n\n'
        'schedule = define_schedule(cron="0 0 1 1 *", run=poke)\n'
    ),
    "agent/schedules/boom.py": (
        "from eve_runtime import define_schedule\n\n\n"
        "def boom(ctx):\n"
        '    raise RuntimeError("the handler broke")\n\n\n'
        'schedule = define_schedule(cron="* * * * *", run=boom)\n'
    ),
    "agent/schedules/stray.py": (
        "from eve_runtime import define_schedule\n\n\n"
        "async def stray(ctx):\n"
        '    await ctx.to("slack", "C1").send("hello")\n\n\n'
        'schedule = define_schedule(cron="0 0 1 1 *", run=stray)\n'
    ),
}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def _harness(tmp_path: Path, files: dict[str, str], clock: Clock, store: Store | None = None) -> Harness:
    return await make_harness(tmp_path, files, options=fast_options(clock=clock), store=store)


async def _advance(runtimes: list[Runtime], clock: Clock, to: float) -> None:
    clock.now = to
    for rt in runtimes:
        await rt.schedules.settle()


async def _sessions(store: Store) -> list[SessionRecord]:
    records = {r.id: r for status in get_args(SessionStatus) for r in await store.list_sessions(status)}
    return sorted(records.values(), key=lambda r: (r.created_at, r.id))  # one that ended meanwhile is listed once


async def _started(h: Harness, session_id: str) -> dict[str, Any]:
    events = await h.turns(session_id, 1)
    data: dict[str, Any] = of_type(events, "session.started")[0]["data"]
    return data


async def test_a_markdown_schedule_runs_a_task_mode_session_at_each_fire_time(tmp_path: Path) -> None:
    clock = Clock(T0 + 30)
    h = await _harness(tmp_path, TICK, clock)
    await h.rt.schedules.settle()
    assert await _sessions(h.store) == []  # a schedule never fired before does not catch up
    await _advance([h.rt], clock, T0 + MINUTE + 1)
    (first,) = await _sessions(h.store)
    assert first.operation_id == "schedule:tick:2026-01-05T09:01:00Z"
    started = await _started(h, first.id)
    assert started["schedule"] == {"name": "tick", "fireAt": "2026-01-05T09:01:00Z", "manual": False}
    events = await h.turns(first.id, 1)
    assert of_type(events, "message.received")[0]["data"]["message"] == "/reply tick done"
    assert of_type(events, "message.completed")[-1]["data"]["message"] == "tick done"
    checkpoint = json.loads(await h.store.load_checkpoint(first.id) or "{}")
    assert checkpoint["task_mode"] and checkpoint["schedule"] == "tick"
    events = await h.wait_for(first.id, lambda events: events[-1]["type"] == "session.completed")
    assert [e["type"] for e in events][-3:] == ["turn.completed", "session.waiting", "session.completed"]
    record = await h.store.get_session(first.id)
    assert record is not None and record.status == "completed"  # nobody writes to it again: it ends
    await _advance([h.rt], clock, T0 + 3 * MINUTE + 5)  # two fire times passed at once: the latest runs
    assert [s.operation_id for s in await _sessions(h.store)] == [
        "schedule:tick:2026-01-05T09:01:00Z",
        "schedule:tick:2026-01-05T09:03:00Z",
    ]
    await h.stop()


async def test_two_runtimes_on_one_store_run_each_fire_time_once(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    store = await open_store(tmp_path)
    a = await _harness(tmp_path / "a", TICK, clock, store)
    b = await _harness(tmp_path / "b", TICK, clock, store)
    for minute in range(1, 6):
        await _advance([a.rt, b.rt], clock, T0 + minute * MINUTE + 2)
    operations = [s.operation_id for s in await _sessions(store)]
    assert operations == [f"schedule:tick:2026-01-05T09:0{m}:00Z" for m in range(1, 6)]
    await a.stop()
    await b.stop()


async def test_a_restart_never_runs_a_fire_time_again(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, TICK, clock)
    await _advance([h.rt], clock, T0 + MINUTE + 1)
    await h.restart()
    await _advance([h.rt], clock, T0 + MINUTE + 30)
    assert len(await _sessions(h.store)) == 1
    await h.stop()


async def test_the_latest_fire_missed_while_down_runs_once_at_start(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, TICK, clock)
    await _advance([h.rt], clock, T0 + MINUTE + 1)
    await h.stop()
    clock.now = T0 + 10 * MINUTE + 20  # down from 09:01 to 09:10: nine fire times missed
    await h.start()
    await h.rt.schedules.settle()
    operations = [s.operation_id for s in await _sessions(h.store)]
    assert operations == ["schedule:tick:2026-01-05T09:01:00Z", "schedule:tick:2026-01-05T09:10:00Z"]
    started = await _started(h, (await _sessions(h.store))[-1].id)
    assert started["schedule"]["fireAt"] == "2026-01-05T09:10:00Z"
    await h.restart()  # starting again runs nothing more
    await h.rt.schedules.settle()
    assert len(await _sessions(h.store)) == 2
    await h.stop()


async def test_missed_fires_of_a_skipping_schedule_are_dropped(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, SKIPPING, clock)
    await _advance([h.rt], clock, T0 + MINUTE + 1)
    await h.stop()
    clock.now = T0 + 10 * MINUTE + 20
    await h.start()
    await h.rt.schedules.settle()
    assert len(await _sessions(h.store)) == 1
    await _advance([h.rt], clock, T0 + 11 * MINUTE)  # the next fire time runs as usual
    assert [s.operation_id for s in await _sessions(h.store)][-1] == "schedule:tick:2026-01-05T09:11:00Z"
    await h.stop()


async def test_a_development_runtime_never_fires_on_the_clock(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, TICK, clock)
    await h.stop()
    assert h.app.root is not None
    dev = Runtime(h.app.root, h.store, options=fast_options(clock=clock), mode="development")
    await dev.start()
    await _advance([dev], clock, T0 + 5 * MINUTE)
    assert await _sessions(h.store) == []
    (manual,) = await dev.schedules.fire_now("tick")  # by hand it fires, in any mode
    assert [s.id for s in await _sessions(h.store)] == [manual]
    await dev.stop()


async def test_a_fire_by_hand_starts_a_new_session_each_time(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, TICK, clock)
    first = await h.rt.schedules.fire_now("tick")
    second = await h.rt.schedules.fire_now("tick")
    assert len(first) == len(second) == 1 and first != second
    started = await _started(h, first[0])
    assert started["schedule"] == {"name": "tick", "fireAt": "2026-01-05T09:00:10Z", "manual": True}
    record = await h.store.get_session(first[0])
    assert record is not None and record.operation_id is None
    await _advance([h.rt], clock, T0 + MINUTE + 1)  # the clock's fires are not affected
    assert len(await _sessions(h.store)) == 3
    await h.stop()


async def test_an_unknown_schedule_names_the_ones_there_are(tmp_path: Path) -> None:
    h = await _harness(tmp_path, TICK, Clock(T0))
    with pytest.raises(UnknownSchedule) as caught:
        await h.rt.schedules.fire_now("tock")
    assert caught.value.available == ["tick"]
    assert "'tock'" in str(caught.value) and "tick" in str(caught.value)
    await h.stop()


async def test_a_run_handler_sends_through_a_channel_address_as_the_app(tmp_path: Path) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, HANDLERS, clock)
    (sid,) = await h.rt.schedules.fire_now("digest")
    assert await h.store.address_holder("webhook:digest") == sid
    events = await h.turns(sid, 1)
    assert of_type(events, "message.completed")[-1]["data"]["message"] == 'whoami -> {"principal":"eve:app"}'
    assert of_type(events, "session.started")[0]["data"]["schedule"]["name"] == "digest"
    await _advance([h.rt], clock, T0 + 60 * MINUTE + 1)  # 10:00: the clock's fire continues that session
    events = await h.turns(sid, 2)
    assert len(of_type(events, "turn.completed")) == 2
    assert [s.id for s in await _sessions(h.store)] == [sid]
    checkpoint = json.loads(await h.store.load_checkpoint(sid) or "{}")
    assert not checkpoint["task_mode"]  # a channel conversation, not a task
    await h.stop()


async def test_wait_until_keeps_a_sync_handlers_fire_alive_until_its_send_is_done(tmp_path: Path) -> None:
    h = await _harness(tmp_path, HANDLERS, Clock(T0 + 10))
    (sid,) = await h.rt.schedules.fire_now("poke")
    assert await h.store.address_holder("webhook:poke-True") == sid
    events = await h.turns(sid, 1)
    assert of_type(events, "message.completed")[-1]["data"]["message"] == "poked"
    await h.stop()


async def test_a_failing_handler_fails_its_fire_only(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(T0 + 10)
    h = await _harness(tmp_path, {**HANDLERS, **TICK}, clock)
    with pytest.raises(ScheduleFailed, match="boom.*the handler broke"):
        await h.rt.schedules.fire_now("boom")
    with pytest.raises(ScheduleFailed, match="no channel 'slack'.*webhook"):
        await h.rt.schedules.fire_now("stray")
    await _advance([h.rt], clock, T0 + MINUTE + 1)  # boom fails again on the clock; tick still runs
    assert [s.operation_id for s in await _sessions(h.store)] == ["schedule:tick:2026-01-05T09:01:00Z"]
    assert any("schedule boom" in message and "failed" in message for message in caplog.messages)
    await h.stop()


@pytest.mark.postgres
@pytest.mark.parametrize("harness_store", ["memory"], indirect=True)  # its own stores: Postgres
async def test_three_runtimes_on_postgres_run_each_fire_time_once(tmp_path: Path) -> None:
    from eve_runtime.store import PostgresStore
    from tests import pg

    with pg.fresh_schema() as schema:
        stores = [PostgresStore(pg.database_url(), schema=schema) for _ in range(3)]
        for store in stores:
            await store.open()
        clock = Clock(T0 + 10)
        runtimes = [await _harness(tmp_path / str(n), TICK, clock, store) for n, store in enumerate(stores)]
        try:
            for minute in range(1, 8):
                await _advance([h.rt for h in runtimes], clock, T0 + minute * MINUTE + 1)
            operations = [s.operation_id for s in await _sessions(stores[0])]
            assert operations == [f"schedule:tick:2026-01-05T09:0{m}:00Z" for m in range(1, 8)]
        finally:
            for h in runtimes:
                await h.stop()
            for store in stores:
                await store.close()
