"""Tool context and workflow tools: ctx.session, ctx.ask, ctx.sleep, ctx.step, abort signals, replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Event, Harness, fast_options, make_harness, of_type, types

pytestmark = pytest.mark.anyio

TOOLS = {
    "agent/tools/whoami.py": '''
from eve_runtime import ToolContext

async def whoami(ctx: ToolContext) -> dict:
    """Tell who is calling."""
    s = ctx.session
    return {"id": s.id, "turn": s.turn_id, "principal": s.principal_id, "parent": s.parent is not None}
''',
    "agent/tools/confirm.py": '''
from eve_runtime import ToolContext, tool

@tool(workflow=True)
async def confirm(ledger: str, ctx: ToolContext) -> dict:
    """Ask before shipping."""
    def note(text):
        with open(ledger, "a") as handle:
            handle.write(text + "\\n")
    await ctx.step(note, "before")
    answer = await ctx.ask("Ship it?", options=["Ship", "Hold"])
    if answer.get("optionId") == "ship":
        await ctx.step(note, "shipped")
    return dict(answer)
''',
    "agent/tools/free.py": '''
from eve_runtime import ToolContext

async def free(ctx: ToolContext) -> dict:
    """Ask an open question."""
    return dict(await ctx.ask("What is your name?"))
''',
    "agent/tools/nap.py": '''
from eve_runtime import ToolContext, tool

@tool(workflow=True)
async def nap(seconds: float, ledger: str, ctx: ToolContext) -> dict:
    """Sleep durably between two side effects."""
    def note(text):
        with open(ledger, "a") as handle:
            handle.write(text + "\\n")
    await ctx.step(note, "before")
    slept = await ctx.sleep(seconds)
    await ctx.step(note, "after")
    return dict(slept)
''',
    "agent/tools/patient.py": '''
from eve_runtime import ToolContext

async def patient(ctx: ToolContext) -> str:
    """Wait until the person steers."""
    await ctx.abort_signal.wait()
    return "stopped: " + str(ctx.abort_signal.reason)
''',
    "agent/tools/ask_question.py": "from eve_runtime.framework_tools import ask_question\n",
}


def call(tool: str, **arguments: Any) -> str:
    return f"/call {tool} {json.dumps(arguments)}"


def result_of(events: list[Event], tool: str) -> dict[str, Any]:
    return next(e["data"] for e in of_type(events, "action.result") if e["data"]["result"]["toolName"] == tool)


def asked(events: list[Event]) -> bool:
    return bool(events) and events[-1]["type"] == "turn.waiting"


@pytest.fixture
async def h(tmp_path: Path) -> Harness:
    return await make_harness(tmp_path, TOOLS)


async def answer(h: Harness, sid: str, request_id: str, **response: str) -> None:
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, **response}]})


async def test_ctx_session_names_the_session_turn_and_person(h: Harness) -> None:
    sid = await h.create(call("whoami"))
    events = await h.turns(sid, 1)
    principal = h.rt.principal_id
    await h.stop()
    output = result_of(events, "whoami")["result"]["output"]
    assert output == {"id": sid, "turn": "turn_0", "principal": principal, "parent": False}


async def test_ctx_ask_parks_on_a_question_and_an_answer_goes_to_the_tool(h: Harness, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("confirm", ledger=str(ledger)))
    events = await h.wait_for(sid, asked)
    requested = of_type(events, "input.requested")[0]["data"]
    request = requested["requests"][0]
    assert requested["callId"] == of_type(events, "actions.requested")[0]["data"]["actions"][0]["callId"]
    assert request["kind"] == "question"
    assert request["prompt"] == "Ship it?"
    assert request["options"] == [{"id": "ship", "label": "Ship"}, {"id": "hold", "label": "Hold"}]
    assert request["allowFreeform"] is False
    assert of_type(events, "turn.waiting")[-1]["data"]["on"] == "input"
    assert "session.waiting" not in types(events)
    await answer(h, sid, request["requestId"], optionId="ship")
    events = await h.turns(sid, 1)
    await h.stop()
    resolved = of_type(events, "input.resolved")[0]["data"]["resolutions"]
    assert resolved == [
        {
            "kind": "question",
            "outcome": "answered",
            "requestId": request["requestId"],
            "response": {"optionId": "ship", "requestId": request["requestId"]},
        }
    ]
    assert result_of(events, "confirm")["result"]["output"] == {"status": "answered", "optionId": "ship"}
    assert ledger.read_text() == "before\nshipped\n"
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]


async def test_a_plain_message_naming_an_option_answers_the_question(h: Harness, tmp_path: Path) -> None:
    sid = await h.create(call("confirm", ledger=str(tmp_path / "l.txt")))
    await h.wait_for(sid, asked)
    await h.send(sid, "hold")
    events = await h.turns(sid, 1)
    await h.stop()
    names = types(events)
    assert names.index("input.resolved") == names.index("message.received", 3) + 1
    assert result_of(events, "confirm")["result"]["output"] == {"status": "answered", "optionId": "hold"}


async def test_free_text_answers_an_open_question(h: Harness) -> None:
    sid = await h.create(call("free"))
    await h.wait_for(sid, asked)
    await h.send(sid, "Ada")
    events = await h.turns(sid, 1)
    await h.stop()
    assert result_of(events, "free")["result"]["output"] == {"status": "answered", "text": "Ada"}


async def test_a_steering_message_withdraws_the_question_and_the_turn_goes_on(h: Harness, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("confirm", ledger=str(ledger)))
    await h.wait_for(sid, asked)
    await h.send(sid, "never mind, tell me a joke")
    events = await h.turns(sid, 1)
    await h.stop()
    resolution = of_type(events, "input.resolved")[0]["data"]["resolutions"][0]
    assert resolution["outcome"] == "cancelled"
    assert result_of(events, "confirm")["result"]["output"] == {"status": "cancelled"}
    assert of_type(events, "message.received")[-1]["data"]["message"] == "never mind, tell me a joke"
    assert ledger.read_text() == "before\n"
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]


async def test_the_abort_signal_fires_when_the_turn_is_steered(h: Harness) -> None:
    sid = await h.create(call("patient"))
    await h.wait_for(sid, lambda ev: "step.completed" in types(ev) or "actions.requested" in types(ev))
    await h.send(sid, "hurry up")
    events = await h.turns(sid, 1)
    await h.stop()
    assert result_of(events, "patient")["result"]["output"] == "stopped: steered"


async def test_cancel_resolves_an_open_question_before_the_turn_ends(h: Harness, tmp_path: Path) -> None:
    sid = await h.create(call("confirm", ledger=str(tmp_path / "l.txt")))
    await h.wait_for(sid, asked)
    await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    await h.stop()
    names = types(events)
    assert names[-3:] == ["input.resolved", "turn.cancelled", "session.waiting"]
    assert of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["outcome"] == "cancelled"


async def test_a_task_mode_session_cannot_ask(h: Harness, tmp_path: Path) -> None:
    sid = await h.create(call("confirm", ledger=str(tmp_path / "l.txt")), mode="task")
    events = await h.turns(sid, 1)
    await h.stop()
    assert of_type(events, "input.requested") == []
    assert result_of(events, "confirm")["result"]["output"] == {"status": "unavailable"}


async def test_ask_question_is_an_opt_in_framework_tool(h: Harness) -> None:
    sid = await h.create(call("ask_question", prompt="Tea or coffee?", options=["Tea", "Coffee"]))
    events = await h.wait_for(sid, asked)
    request = of_type(events, "input.requested")[0]["data"]["requests"][0]
    await answer(h, sid, request["requestId"], optionId="coffee")
    events = await h.turns(sid, 1)
    await h.stop()
    assert result_of(events, "ask_question")["result"]["output"] == {"status": "answered", "answer": "Coffee"}


async def test_sleep_is_journaled_on_the_stream(h: Harness, tmp_path: Path) -> None:
    sid = await h.create(call("nap", seconds=0.05, ledger=str(tmp_path / "l.txt")))
    events = await h.turns(sid, 1)
    await h.stop()
    partials = [e["data"]["result"]["output"] for e in of_type(events, "action.partial")]
    assert [p["status"] for p in partials] == ["step-completed", "sleeping", "step-completed"]
    assert partials[1]["seconds"] == 0.05 and partials[1]["wakeAt"].endswith("Z")
    assert result_of(events, "nap")["result"]["output"] == {"status": "slept"}


class Clock:
    def __init__(self) -> None:
        import time

        self.offset = 0.0
        self._time = time.time

    def __call__(self) -> float:
        return self._time() + self.offset


async def test_a_workflow_tool_killed_mid_sleep_wakes_on_time_after_a_restart(tmp_path: Path) -> None:
    clock = Clock()
    h = await make_harness(tmp_path, TOOLS, options=fast_options(clock=clock))
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("nap", seconds=3600, ledger=str(ledger)))
    await h.wait_for(
        sid,
        lambda ev: any(
            e["data"].get("result", {}).get("output", {}).get("status") == "sleeping"
            for e in of_type(ev, "action.partial")
        ),
    )
    await h.crash()
    clock.offset = 3600  # an hour passes while the process is down
    await h.restart()
    events = await h.turns(sid, 1)
    await h.stop()
    assert ledger.read_text() == "before\nafter\n"  # the step before the sleep did not run again
    assert result_of(events, "nap")["result"]["output"] == {"status": "slept"}
    assert [p["data"]["result"]["output"]["status"] for p in of_type(events, "action.partial")] == [
        "step-completed",
        "sleeping",
        "step-completed",
    ]
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]
    assert of_type(events, "turn.failed") == []


async def test_a_question_survives_a_restart_and_the_answer_resumes_the_tool(h: Harness, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("confirm", ledger=str(ledger)))
    events = await h.wait_for(sid, asked)
    request_id = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await h.restart()
    await answer(h, sid, request_id, optionId="ship")
    events = await h.turns(sid, 1)
    await h.stop()
    assert ledger.read_text() == "before\nshipped\n"
    assert len(of_type(events, "input.requested")) == 1  # not asked again
    assert result_of(events, "confirm")["result"]["output"] == {"status": "answered", "optionId": "ship"}
