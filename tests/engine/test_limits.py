"""Session budgets: the session-limit prompt, continue, stop, and task mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio

LIMITED = {
    "agent/agent.py": (
        "from eve_runtime import define_agent\n\n"
        "agent = define_agent(model='test', limits={'max_input_tokens_per_session': 30})\n"
    )
}
LONG = " ".join(f"w{n}" for n in range(40))  # one call's input is well over 30 words


def parked(events: list[dict]) -> bool:  # type: ignore[type-arg]
    return bool(events) and events[-1]["type"] == "turn.waiting"


async def test_crossing_a_budget_asks_before_the_next_model_call(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, LIMITED)
    sid = await h.create(f'/call get_weather {{"city": "Rome"}}\n{LONG}')
    events = await h.wait_for(sid, parked)
    request = of_type(events, "input.requested")[0]["data"]["requests"][0]
    assert request["kind"] == "session-limit"
    assert request["requestId"].startswith(f"{sid}:limit:input:")
    assert [o["id"] for o in request["options"]] == ["continue", "stop"]
    assert request["action"]["toolName"] == "session_limit_continuation"
    assert "input-token limit" in request["prompt"]
    assert len(of_type(events, "step.started")) == 1  # the crossing call finished; the next one waits
    await h.rt.deliver(
        sid, "responses", {"inputResponses": [{"requestId": request["requestId"], "optionId": "continue"}]}
    )
    events = await h.turns(sid, 1)
    await h.stop()
    assert of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["outcome"] == "approved"
    assert last_reply(events).startswith("get_weather -> ")


async def test_stop_cancels_the_turn(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, LIMITED)
    sid = await h.create(f'/call get_weather {{"city": "Rome"}}\n{LONG}')
    await h.wait_for(sid, parked)
    await h.send(sid, "Stop")
    events = await h.turns(sid, 1)
    await h.stop()
    assert types(events)[-3:] == ["input.resolved", "turn.cancelled", "session.waiting"]


async def test_an_unrelated_reply_waits_and_the_prompt_stays(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, LIMITED)
    sid = await h.create(f'/call get_weather {{"city": "Rome"}}\n{LONG}')
    await h.wait_for(sid, parked)
    await h.send(sid, "what is happening?")
    events = await h.events(sid)
    assert events[-1]["type"] == "turn.waiting" and len(of_type(events, "input.requested")) == 1
    await h.send(sid, "continue")
    # the queued reply is the next turn; with a 30-token budget its first call is past the window again
    events = await h.wait_for(sid, lambda ev: len(of_type(ev, "input.requested")) == 2 and parked(ev))
    assert [e["data"]["turnId"] for e in of_type(events, "turn.started")] == ["turn_0", "turn_1"]
    assert of_type(events, "message.received")[-1]["data"]["message"] == "what is happening?"
    await h.send(sid, "1")  # option 1: continue
    events = await h.turns(sid, 2)
    await h.stop()
    assert last_reply(events) == "echo: what is happening?"


async def test_task_mode_fails_instead_of_asking(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, LIMITED)
    session = await h.rt.create_session(
        message={"message": f'/call get_weather {{"city": "Rome"}}\n{LONG}', "mode": "task"}
    )
    events = await h.turns(session.id, 1)
    await h.stop()
    assert "input.requested" not in types(events)
    failed = of_type(events, "turn.failed")[0]["data"]
    # nobody can let it go on: the session fails, as eve's does (`step.failed -> turn.failed -> session.failed`)
    assert failed["code"] == "SESSION_TOKEN_LIMIT_REACHED" and failed["terminal"] is True
    assert types(events)[-3:] == ["step.failed", "turn.failed", "session.failed"]
    ended = of_type(events, "session.failed")[0]["data"]
    assert (ended["code"], ended["sessionId"]) == ("SESSION_TOKEN_LIMIT_REACHED", session.id)
    record = await h.store.get_session(session.id)
    assert record is not None and record.status == "failed"


async def test_no_prompt_under_the_default_budget(harness: Harness) -> None:
    sid = await harness.create('/call get_weather {"city": "Rome"}')
    events = await harness.turns(sid, 1)
    assert "input.requested" not in types(events)
