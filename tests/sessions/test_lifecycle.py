"""Session lifecycle: create without a message, idempotency keys, reset, timeout."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eve_runtime.store.base import SessionNotActive
from tests.harness import Harness, fast_options, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio


async def test_create_without_a_message_emits_nothing_until_the_first_message(harness: Harness) -> None:
    sid = await harness.create()
    assert await harness.events(sid) == []
    await harness.send(sid, "first message")
    events = await harness.turns(sid, 1)
    assert types(events)[:3] == ["session.started", "turn.started", "message.received"]
    assert events[1]["data"]["turnId"] == "turn_0"


async def test_a_retried_idempotent_send_starts_nothing_new(harness: Harness) -> None:
    sid = await harness.create("hello")
    await harness.turns(sid, 1)
    first = await harness.rt.deliver(sid, "message", {"message": "once"}, idempotency_key="k1")
    again = await harness.rt.deliver(sid, "message", {"message": "once"}, idempotency_key="k1")
    assert again.id == first.id
    events = await harness.turns(sid, 2)
    assert len(of_type(events, "turn.started")) == 2
    assert [e["data"]["message"] for e in of_type(events, "message.received")] == ["hello", "once"]


async def test_create_once_by_operation_id(harness: Harness) -> None:
    one = await harness.rt.create_session(message={"message": "hi"}, operation_id="op-1")
    two = await harness.rt.create_session(message={"message": "hi"}, operation_id="op-1")
    assert one.id == two.id
    events = await harness.turns(one.id, 1)
    assert len(of_type(events, "message.received")) == 1


async def test_reset_an_idle_session(harness: Harness) -> None:
    sid = await harness.create("before reset")
    await harness.turns(sid, 1)
    assert await harness.rt.reset(sid, "Start over") is True
    events = await harness.events(sid)
    assert types(events)[-2:] == ["session.waiting", "session.completed"]
    assert events[-1]["data"]["usage"] == events[-2]["data"]["usage"]
    session = await harness.store.get_session(sid)
    assert session is not None and session.status == "reset"
    with pytest.raises(SessionNotActive):
        await harness.send(sid, "after")
    assert await harness.rt.reset(sid) is False
    assert await harness.rt.cancel(sid) is False


async def test_reset_during_a_turn_cancels_it_first(tmp_path: Path) -> None:
    h = await make_harness(tmp_path)
    sid = await h.create("/delay 200\n/reply slow")
    await h.wait_for(sid, lambda events: "step.started" in types(events))
    assert await h.rt.reset(sid) is True
    events = await h.events(sid)
    await h.stop()
    assert types(events)[-3:] == ["turn.cancelled", "session.waiting", "session.completed"]


async def test_session_timeout_completes_an_idle_session(tmp_path: Path) -> None:
    now = [1_000_000.0]
    files = {
        "agent/agent.py": (
            "from eve_runtime import define_agent\n\n"
            "agent = define_agent(model='test', limits={'session_timeout_ms': 60_000})\n"
        )
    }
    h = await make_harness(tmp_path, files, options=fast_options(clock=lambda: now[0]))
    sid = await h.create("hello")
    await h.turns(sid, 1)
    now[0] += 61
    h.rt.timeouts.changed.set()  # the timer re-reads the (virtual) clock
    events = await h.wait_for(sid, lambda events: events[-1]["type"] == "session.completed")
    assert types(events)[-2:] == ["session.waiting", "session.completed"]
    session = await h.store.get_session(sid)
    assert session is not None and session.status == "completed"
    with pytest.raises(SessionNotActive):
        await h.send(sid, "too late")
    assert len(await h.events(sid)) == len(events)  # data kept, nothing more written
    await h.stop()


async def test_a_session_past_its_deadline_while_down_completes_at_start(tmp_path: Path) -> None:
    now = [1_000_000.0]
    files = {
        "agent/agent.py": (
            "from eve_runtime import define_agent\n\n"
            "agent = define_agent(model='test', limits={'session_timeout_ms': 1_000})\n"
        )
    }
    h = await make_harness(tmp_path, files, options=fast_options(clock=lambda: now[0]))
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await h.crash()
    now[0] += 5
    await h.start()
    events = await h.wait_for(sid, lambda events: events[-1]["type"] == "session.completed")
    await h.stop()
    assert types(events).count("session.completed") == 1


async def test_no_timeout_when_disabled(tmp_path: Path) -> None:
    files = {
        "agent/agent.py": (
            "from eve_runtime import define_agent\n\n"
            "agent = define_agent(model='test', limits={'session_timeout_ms': False})\n"
        )
    }
    h = await make_harness(tmp_path, files)
    session = await h.rt.create_session(message={"message": "hi"})
    assert session.deadline is None
    events = await h.turns(session.id, 1)
    await h.stop()
    assert last_reply(events) == "echo: hi"


async def test_a_parked_session_holds_no_task(harness: Harness) -> None:
    sids = [await harness.create(f"hello {n}") for n in range(5)]
    for sid in sids:
        await harness.turns(sid, 1)
    for _ in range(50):
        if not harness.rt.actors:
            break
        await asyncio.sleep(0.01)
    assert len(harness.rt.actors) == 0
    session_tasks = [
        t for t in asyncio.all_tasks() if t.get_name().startswith(("eve-session", "eve-turn", "eve-flush"))
    ]
    assert session_tasks == []


async def test_sessions_of_an_earlier_dev_run_stay_dormant_until_resumed(tmp_path: Path) -> None:
    import time

    from eve_runtime.sessions.availability import SessionDormant
    from eve_runtime.sessions.runtime import Runtime

    h = await make_harness(tmp_path)
    parked = await h.create('/call get_weather {"city": "Paris"}')
    await h.turns(parked, 1)
    # two words, 200 ms apart: the crash comes while the model waits for the second (after the first,
    # a one-word reply's turn would end at once, and its commit could still land after the crash)
    unfinished = await h.create("/delay 200\n/reply slow reply")
    await h.wait_for(unfinished, lambda ev: "message.appended" in [e["type"] for e in ev])
    await h.crash()
    # eve dev without --resume: sessions from before this run neither run nor take messages
    assert h.app.root is not None
    runtime = Runtime(h.app.root, h.store, options=h.options, mode="development", dormant_before=time.time())
    await runtime.start()
    with pytest.raises(SessionDormant):
        await runtime.deliver(parked, "message", {"message": "hello?"})
    assert not await runtime.cancel(unfinished)
    count = len(await h.events(unfinished))
    await asyncio.sleep(0.3)
    assert len(await h.events(unfinished)) == count  # nothing resumed it
    fresh = await runtime.create_session(message={"message": "new"})
    assert fresh.id  # new sessions work as usual
    assert await runtime.reset(parked)  # a reset retires a dormant session
    assert (await h.store.get_session(parked)).status == "reset"  # type: ignore[union-attr]
    await runtime.stop(2)
    # eve dev --resume: the unfinished turn completes
    h.runtime = None
    await h.start()
    events = await h.turns(unfinished, 1)
    await h.stop()
    assert last_reply(events) == "slow reply"


async def test_a_stranded_session_is_never_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import dataclasses

    from eve_runtime.sessions.availability import SessionStranded
    from eve_runtime.store.base import NewDelivery

    h = await make_harness(tmp_path)
    record = dataclasses.replace(h.rt.new_record(), eve_version="")  # written by a version that recorded none
    first = NewDelivery(id="d-stranded", kind="message", payload={"message": "hi"})
    session, _ = await h.store.create_session(record, first)
    await h.restart()
    await asyncio.sleep(0.2)
    assert await h.events(session.id) == []  # its accepted message is kept, not run
    with pytest.raises(SessionStranded):
        await h.rt.deliver(session.id, "message", {"message": "hello?"})
    await h.stop()
    assert "is stranded and not resumed" in caplog.text


async def test_the_session_timeout_retires_a_stranded_session(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import dataclasses

    from eve_runtime.store.base import NewDelivery

    now = [1_000_000.0]
    h = await make_harness(tmp_path, options=fast_options(clock=lambda: now[0]))
    record = dataclasses.replace(h.rt.new_record(), eve_version="0.0.1", deadline=now[0] + 60)
    first = NewDelivery(id="d-stranded", kind="message", payload={"message": "hi"})
    session, _ = await h.store.create_session(record, first)
    await h.restart()  # a process of this version finds it at start: stranded, its timer still runs
    await asyncio.sleep(0.1)
    assert await h.events(session.id) == []
    now[0] += 61
    h.rt.timeouts.changed.set()  # the timer re-reads the (virtual) clock
    events = await h.wait_for(session.id, lambda events: bool(events))
    for _ in range(500):  # the warning follows the write
        if any(r.getMessage().startswith("Reset stranded session") for r in caplog.records):
            break
        await asyncio.sleep(0.01)
    await h.stop()
    assert events == [
        {
            "data": {
                "code": "session_stranded",
                "message": "This session is no longer available.",
                "details": {"trigger": "timeout"},
                "sessionId": session.id,
            },
            "type": "session.failed",
            "meta": events[0]["meta"],
        }
    ]
    retired = await h.store.get_session(session.id)
    assert retired is not None and retired.status == "reset"  # none of its code ran, no fresh session started
    warnings = [r for r in caplog.records if r.getMessage().startswith("Reset stranded session")]
    assert [(r.levelname, getattr(r, "trigger", None), getattr(r, "previousEveVersion", None)) for r in warnings] == [
        ("WARNING", "timeout", "0.0.1")
    ]


async def _stranded_child(h: Harness, caplog: pytest.LogCaptureFixture) -> str:
    import dataclasses

    from eve_runtime.store.base import NewDelivery

    record = dataclasses.replace(h.rt.new_record(), agent="node:subagents/researcher", eve_version="0.0.1")
    first = NewDelivery(id="d-child", kind="message", payload={"message": "research this"})
    session, _ = await h.store.create_session(record, first)
    return session.id


def _descendant_warnings(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str | None]]:
    found = [r for r in caplog.records if r.getMessage().startswith("Retired stranded descendant run")]
    return [(r.levelname, getattr(r, "runId", None)) for r in found]


async def test_a_stranded_child_session_is_cancelled_when_recovered_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(tmp_path)
    child = await _stranded_child(h, caplog)
    await h.restart()  # recovering it at start is delivering work to it
    record = await h.store.get_session(child)
    events = await h.events(child)
    await h.stop()
    assert record is not None and record.status == "reset"
    assert events == []  # none of its code ran; nothing is written for it
    assert _descendant_warnings(caplog) == [("WARNING", child)]
    assert "is stranded and not resumed" not in caplog.text  # that is a root session's fate


async def test_a_delivery_to_a_stranded_child_session_cancels_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(tmp_path)
    child = await _stranded_child(h, caplog)
    with pytest.raises(SessionNotActive):  # what a parent sending it more work sees: the task has ended
        await h.rt.deliver(child, "message", {"message": "and this"})
    record = await h.store.get_session(child)
    await h.stop()
    assert record is not None and record.status == "reset"
    assert await h.events(child) == []
    assert _descendant_warnings(caplog) == [("WARNING", child)]
