"""Tools that run as tasks (`@tool(task=True)`): receipts, results, failures, cancels and restarts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_workflow_tools import Clock
from tests.harness import Event, Harness, fast_options, make_harness, of_type, types

pytestmark = pytest.mark.anyio

TOOLS = {
    "agent/tools/report.py": '''
from eve_runtime import ToolContext, tool

@tool(task=True)
async def report(topic: str, ledger: str, seconds: float, ctx: ToolContext) -> dict:
    """Write a report in the background."""
    def note(text):
        with open(ledger, "a") as handle:
            handle.write(text + "\\n")
    await ctx.step(note, "started " + topic)
    await ctx.sleep(seconds)
    await ctx.step(note, "finished " + topic)
    return {"topic": topic, "pages": 3}
''',
    "agent/tools/broken.py": '''
from eve_runtime import tool

@tool(task=True)
async def broken() -> str:
    """Fail in the background."""
    raise RuntimeError("the printer is on fire")
''',
}


def call(tool: str, **arguments: Any) -> str:
    return f"/call {tool} {json.dumps(arguments)}"


def settled(events: list[Event]) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(events, "task.settled")]


async def sleeping_child(h: Harness, parent: str) -> str:
    """The tool task's session, once its tool sleeps (journaled)."""
    await h.wait_for(parent, lambda ev: "task.started" in types(ev))
    children: list[str] = []
    for _ in range(250):  # `task.started` is durable before the child session exists (SQLite shows the gap)
        if children := [s.id for s in await h.store.list_sessions() if s.id != parent]:
            break
        await asyncio.sleep(0.02)
    child = children[0]

    def sleeps(events: list[Event]) -> bool:
        return any(e["data"]["result"]["output"].get("status") == "sleeping" for e in of_type(events, "action.partial"))

    await h.wait_for(child, sleeps)
    return child


@pytest.fixture
async def h(tmp_path: Path) -> Harness:
    return await make_harness(tmp_path, TOOLS)


async def test_a_task_tool_answers_with_a_receipt_and_settles_with_its_result(h: Harness, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("report", topic="tides", ledger=str(ledger), seconds=0.05))
    events = await h.turns(sid, 1)
    await h.stop()
    names = types(events)
    started = of_type(events, "task.started")[0]["data"]
    task_id = started["taskId"]
    assert started["kind"] == "tool" and started["name"] == "report" and task_id.startswith("report-")
    receipt = of_type(events, "action.result")[0]["data"]
    assert receipt["result"]["output"] == {"status": "working", "taskId": task_id}
    assert names.index("step.completed") < names.index("task.started") < names.index("action.result")
    assert settled(events) == [
        {
            "callId": started["callId"],
            "kind": "tool",
            "name": "report",
            "output": {"topic": "tides", "pages": 3},
            "status": "completed",
            "taskId": task_id,
            "turnId": "turn_0",
        }
    ]
    assert names.index("task.settled") < names.index("turn.completed")
    assert ledger.read_text() == "started tides\nfinished tides\n"


async def test_a_failing_task_tool_settles_failed(h: Harness) -> None:
    sid = await h.create(call("broken"))
    events = await h.turns(sid, 1)
    await h.stop()
    result = settled(events)[0]
    assert result["status"] == "failed"
    assert "the printer is on fire" in result["error"]["message"]
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]


async def test_cancel_stops_a_task_tool(h: Harness, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("report", topic="slow", ledger=str(ledger), seconds=30))
    child = await sleeping_child(h, sid)
    await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    child_events = await h.turns(child, 1)
    await h.stop()
    assert "turn.cancelled" in types(child_events)
    assert settled(events)[0]["status"] == "cancelled"
    assert types(events)[-3:] == ["task.settled", "turn.cancelled", "session.waiting"]
    assert ledger.read_text() == "started slow\n"


async def test_a_task_tool_killed_mid_sleep_finishes_once_after_a_restart(tmp_path: Path) -> None:
    clock = Clock()
    h = await make_harness(tmp_path, TOOLS, options=fast_options(clock=clock))
    ledger = tmp_path / "ledger.txt"
    sid = await h.create(call("report", topic="night", ledger=str(ledger), seconds=3600))
    await sleeping_child(h, sid)
    await h.crash()
    clock.offset = 3600
    await h.restart()
    events = await h.turns(sid, 1)
    await h.stop()
    assert ledger.read_text() == "started night\nfinished night\n"
    assert [s["status"] for s in settled(events)] == ["completed"]


SERVED = {
    "agent/tools/tally.py": '''
from eve_runtime import ToolContext, tool

@tool(serve=True)
async def tally(n: int, ctx: ToolContext) -> int:
    """Keep a running total: call again with the taskId to add more."""
    total = n
    while total < 100:
        more = await ctx.reply(total)
        total += more["n"]
    return total
''',
}


def _brief(event: Event) -> str:
    """An event's type, with what a served tool's calls and results carry."""
    data = event["data"]
    result = data.get("result") or {}
    fields = {
        "callId": data.get("callId") or result.get("callId"),
        "status": data.get("status"),
        "output": data.get("output", result.get("output")),
        "code": (data.get("error") or {}).get("code"),
        "message": str(data["message"])[:80] if "message" in data else None,
    }
    return str(event["type"]) + " " + json.dumps({k: v for k, v in fields.items() if v is not None})


async def _trails(h: Harness, parent: str) -> str:
    """The parent's and its children's events, for a failing assertion's message."""
    lines = [f"{parent}:", *map(_brief, await h.events(parent))]
    for child in [s.id for s in await h.store.list_sessions() if s.id != parent]:
        lines += [f"{child}:", *map(_brief, await h.events(child))]
    return "\n".join(lines)


async def test_a_served_tool_takes_more_calls_by_task_id(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, SERVED)
    sid = await h.create(call("tally", n=5))
    events = await h.turns(sid, 1)
    task_id = of_type(events, "task.started")[0]["data"]["taskId"]
    await h.send(sid, call("tally", n=7, taskId=task_id))
    events = await h.turns(sid, 2)
    await h.restart()  # the served tool's state is rebuilt from its journal
    await h.send(sid, call("tally", n=10, taskId=task_id))
    events = await h.turns(sid, 3)
    await h.send(sid, call("tally", n=90, taskId=task_id))
    events = await h.turns(sid, 4)
    await h.send(sid, call("tally", n=1, taskId=task_id))
    events = await h.turns(sid, 5)
    trail = await _trails(h, sid)
    await h.stop()
    # each turn ends once: a turn end recovery closes again (its checkpoint lost, its
    # `session.waiting` durable) counts as one more boundary, and the calls above then race their turns
    assert [e["data"]["turnId"] for e in of_type(events, "turn.completed")] == [f"turn_{i}" for i in range(5)], trail
    assert [s["output"] for s in settled(events) if s["status"] == "completed"] == [5, 12, 22, 112], trail
    assert {s["taskId"] for s in settled(events)} == {task_id}
    ended = [r["data"] for r in of_type(events, "action.result") if r["data"]["status"] == "failed"]
    assert ended[-1]["error"]["code"] == "TASK_ENDED"
    receipts = [
        r["data"]["result"]["output"] for r in of_type(events, "action.result") if r["data"]["status"] == "completed"
    ]
    assert receipts[0] == {"status": "working", "taskId": task_id}


async def test_a_served_tool_schema_offers_task_id(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, SERVED)
    await h.stop()
    assert h.app.root is not None
    from eve_runtime.engine.conversation import tool_definitions

    schema = next(t.input_schema for t in tool_definitions(h.app.root, None) if t.name == "tally")
    assert set(schema["properties"]) == {"n", "taskId"}
    assert schema["required"] == ["n"]
