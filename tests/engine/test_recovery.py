"""Durability: what a crash leaves behind, and how the next process picks the session up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.checkpoint import SessionState
from eve_runtime.engine.recovery import ABANDONED_TEXT
from eve_runtime.messages import Message, ToolCall, ToolMessage
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.store.base import NewDelivery
from tests.harness import Harness, fast_options, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio

LEDGER_TOOLS = {
    "agent/tools/quick.py": '''
CALLS = []

def quick(label: str) -> str:
    """Records its call."""
    CALLS.append(label)
    return f"done {label}"
''',
    "agent/tools/slow.py": '''
import asyncio
CALLS = []

async def slow(label: str) -> str:
    """Records its call, then takes forever."""
    CALLS.append(label)
    await asyncio.sleep(60)
    return "never"
''',
}


def calls(h: Harness, tool: str) -> list[str]:
    assert h.app.root is not None
    function = h.app.root.tools[tool].function
    assert function is not None
    ledger: list[str] = function.__globals__["CALLS"]
    return ledger


class Script:
    """A model that calls tools as scripted per step, holding on a gate when asked."""

    def __init__(self, plan: list[Any]) -> None:
        self.plan = plan
        self.gate = asyncio.Event()
        self.requests: list[list[Message]] = []

    async def stream(self, messages: list[Message], info: FunctionInfo) -> AsyncIterator[str | ToolCall]:
        self.requests.append(messages)
        step = sum(1 for m in messages if m.role == "assistant")
        action = self.plan[min(step, len(self.plan) - 1)]
        if action == "hold":
            yield "thinking "
            await self.gate.wait()
            yield "released"
        elif isinstance(action, list):
            for call in action:
                yield call
        else:
            yield action


async def settle(h: Harness, sid: str, until: Any) -> None:
    await h.wait_for(sid, until)
    await asyncio.sleep(0.02)  # let the background flush land, as it would before a kill


async def test_a_crash_mid_output_reruns_the_step_with_new_events(tmp_path: Path) -> None:
    script = Script(["hold"])
    h = await make_harness(tmp_path, models={"test": FunctionModel(stream_function=script.stream)})
    sid = await h.create("hi")
    await settle(h, sid, lambda ev: "message.appended" in types(ev))
    before = await h.events(sid)
    await h.restart()
    script.gate.set()
    events = await h.turns(sid, 1)
    await h.stop()
    assert events[: len(before)] == before  # nothing the first attempt wrote is rewritten
    after = events[len(before) :]
    assert types(after)[0] == "step.started" and after[0]["data"]["stepIndex"] == 0
    assert {e["data"]["turnId"] for e in after if "turnId" in e["data"]} == {"turn_0"}
    assert not {e["meta"]["id"] for e in after} & {e["meta"]["id"] for e in before}
    assert types(events).count("turn.started") == 1 and types(events).count("turn.completed") == 1
    assert last_reply(events) == "thinking released"


async def test_a_started_call_is_never_run_again(tmp_path: Path) -> None:
    plan = [
        [
            ToolCall(id="a", name="quick", arguments={"label": "a"}),
            ToolCall(id="b", name="slow", arguments={"label": "b"}),
        ],
        "done",
    ]
    script = Script(plan)
    h = await make_harness(tmp_path, LEDGER_TOOLS, models={"test": FunctionModel(stream_function=script.stream)})
    sid = await h.create("go")
    await settle(h, sid, lambda ev: len(of_type(ev, "action.result")) == 1)
    assert calls(h, "quick") == ["a"] and calls(h, "slow") == ["b"]
    await h.restart()
    events = await h.turns(sid, 1)
    await h.stop()
    assert calls(h, "quick") == ["a"] and calls(h, "slow") == ["b"]  # neither ran again
    recovered = {m.tool_call_id: m.content for m in script.requests[-1] if isinstance(m, ToolMessage)}
    assert recovered == {"a": "done a", "b": ABANDONED_TEXT}
    assert last_reply(events) == "done"
    started = of_type(events, "step.started")
    assert [e["data"]["stepIndex"] for e in started] == [0, 0]  # the interrupted step re-runs as step 0
    assert types(events).count("actions.requested") == 2


async def test_a_parked_session_re_emits_nothing_after_a_restart(harness: Harness) -> None:
    sid = await harness.create("hello")
    before = await harness.turns(sid, 1)
    await harness.restart()
    await asyncio.sleep(0.05)
    assert await harness.events(sid) == before
    await harness.send(sid, "again")
    events = await harness.turns(sid, 2)
    assert events[: len(before)] == before and last_reply(events) == "echo: again"


async def test_an_accepted_message_survives_a_crash_before_its_turn(tmp_path: Path) -> None:
    h = await make_harness(tmp_path)
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await h.crash()
    await h.store.enqueue(sid, NewDelivery(id="d-late", kind="message", payload={"message": "accepted while down"}))
    await h.start()
    events = await h.turns(sid, 2)
    await h.stop()
    assert last_reply(events) == "echo: accepted while down"
    assert "d-late" in events[-1]["meta"]["deliveryIds"]


async def test_more_than_three_interruptions_fail_the_turn(tmp_path: Path) -> None:
    script = Script(["hold"])
    h = await make_harness(tmp_path, models={"test": FunctionModel(stream_function=script.stream)})
    sid = await h.create("hi")
    for crash in range(4):
        await settle(h, sid, lambda ev, n=crash + 1: types(ev).count("step.started") >= n)
        await h.restart()
    events = await h.turns(sid, 1)
    assert types(events)[-2:] == ["turn.failed", "session.waiting"]
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "STEP_INTERRUPTED" and failed["terminal"] is False
    assert types(events).count("step.started") == 4
    script.plan = ["fine"]
    await h.send(sid, "next")
    events = await h.turns(sid, 2)
    await h.stop()
    assert last_reply(events) == "fine"


async def test_checkpoint_batches_rebuild_completed_steps_from_events(tmp_path: Path) -> None:
    plan = [
        [ToolCall(id="a", name="quick", arguments={"label": "a"})],
        [ToolCall(id="b", name="quick", arguments={"label": "b"})],
        "hold",
    ]
    script = Script(plan)
    files = {
        **LEDGER_TOOLS,
        "agent/agent.py": (
            "from eve_runtime import define_agent\n\n"
            "agent = define_agent(model='test', experimental={'workflow': {'model_calls_per_step': 3}})\n"
        ),
    }
    h = await make_harness(tmp_path, files, models={"test": FunctionModel(stream_function=script.stream)})
    sid = await h.create("go")
    await settle(h, sid, lambda ev: types(ev).count("step.started") == 3 and "message.appended" in types(ev))
    raw = await h.store.load_checkpoint(sid)
    assert raw is not None and '"step_index":0' in raw  # nothing checkpointed inside the batch
    await h.restart()
    script.gate.set()
    events = await h.turns(sid, 1)
    await h.stop()
    assert calls(h, "quick") == ["a", "b"]
    assert [e["data"]["stepIndex"] for e in of_type(events, "step.started")] == [0, 1, 2, 2]
    history = script.requests[-1]
    assert [m.tool_call_id for m in history if isinstance(m, ToolMessage)] == ["a", "b"]
    totals = of_type(events, "session.waiting")[0]["data"]["usage"]
    assert totals["inputTokens"] == sum(e["data"]["usage"]["inputTokens"] for e in of_type(events, "step.completed"))


async def test_events_are_identical_on_every_read(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, options=fast_options())
    sid = await h.create('/call get_weather {"city":"Oslo"}')
    await h.turns(sid, 1)
    first = await h.store.read_events(sid)
    await h.restart()
    second = await h.store.read_events(sid)
    await h.stop()
    assert [r.line for r in first] == [r.line for r in second]
    assert [r.index for r in first] == list(range(len(first)))


async def test_checkpoints_written_after_a_reload_cover_every_event(tmp_path: Path) -> None:
    approval = {
        "agent/tools/guarded.py": (
            "from eve_runtime import tool\n\n@tool(needs_approval=True)\ndef guarded() -> str:\n"
            '    """Needs a yes."""\n    return "ok"\n'
        )
    }
    h = await make_harness(tmp_path, approval)
    sid = await h.create("/call guarded {}")
    events = await h.wait_for(sid, lambda ev: bool(ev) and ev[-1]["type"] == "turn.waiting")
    request_id = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await h.restart()  # the next actor loads the parked turn from the store
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, "optionId": "approve"}]})
    await h.turns(sid, 1)
    await h.stop()
    raw = await h.store.load_checkpoint(sid)
    assert raw is not None
    assert SessionState.model_validate_json(raw).event_count == await h.store.event_count(sid)
