"""Recovery closes every call an interrupted attempt left open: one `action.result` each, never two."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.client import Conversation
from eve_runtime.messages import ToolCall
from eve_runtime.models import FunctionModel
from eve_runtime.outcomes import ABANDONED_CODE, ABANDONED_TEXT
from tests.engine.test_recovery import LEDGER_TOOLS, Script, calls, settle
from tests.harness import Event, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio


def closings(events: list[Event]) -> Counter[str]:
    """How many `action.result` events each requested call has."""
    requested = [a["callId"] for e in of_type(events, "actions.requested") for a in e["data"]["actions"]]
    results = Counter(e["data"]["result"]["callId"] for e in of_type(events, "action.result"))
    return Counter({call: results[call] for call in requested})


def result_of(events: list[Event], call_id: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        e["data"] for e in of_type(events, "action.result") if e["data"]["result"]["callId"] == call_id
    ]
    [data] = found
    return data


async def test_a_call_cut_off_by_a_crash_gets_one_abandoned_result(tmp_path: Path) -> None:
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
    await h.restart()
    events = await h.turns(sid, 1)
    await h.restart()  # a second recovery finds nothing left to close
    again = await h.events(sid)
    await h.stop()
    assert calls(h, "slow") == ["b"]  # closed, not run again
    assert closings(events) == {"a": 1, "b": 1}
    closed = result_of(events, "b")
    assert closed["status"] == "failed" and closed["error"] == {"code": ABANDONED_CODE, "message": ABANDONED_TEXT}
    assert closed["result"] == {
        "callId": "b",
        "isError": True,
        "kind": "tool-result",
        "output": ABANDONED_TEXT,
        "toolName": "slow",
    }
    assert (closed["turnId"], closed["stepIndex"]) == ("turn_0", 0)
    kinds = types(events)
    closing_at = next(i for i, e in enumerate(events) if e["type"] == "action.result" and e["data"] is closed)
    assert closing_at < [i for i, k in enumerate(kinds) if k == "step.started"][1]  # before the step runs again
    assert last_reply(events) == "done"
    assert again == events
    conversation = Conversation.from_events(events)
    states = {c.call_id: c.state for c in conversation.tool_calls.values()}
    assert states == {"a": "completed", "b": "abandoned"}


async def test_an_approved_call_cut_off_by_a_crash_is_closed(tmp_path: Path) -> None:
    files = {
        "agent/tools/guarded.py": (
            "import asyncio\nfrom eve_runtime import tool\n\nCALLS = []\n\n@tool(needs_approval=True)\n"
            "async def guarded() -> str:\n"
            '    """Needs a yes, then takes forever."""\n'
            "    CALLS.append('g')\n    await asyncio.sleep(60)\n    return 'never'\n"
        )
    }
    h = await make_harness(tmp_path, files)
    sid = await h.create("/call guarded {}")
    events = await h.wait_for(sid, lambda ev: bool(ev) and ev[-1]["type"] == "turn.waiting")
    request_id = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, "optionId": "approve"}]})
    await settle(h, sid, lambda ev: "input.resolved" in types(ev))
    for _ in range(100):
        if calls(h, "guarded"):
            break
        await settle(h, sid, lambda ev: True)
    assert calls(h, "guarded") == ["g"]
    await h.restart()
    events = await h.turns(sid, 1)
    await h.stop()
    assert calls(h, "guarded") == ["g"]
    [call_id] = list(closings(events))
    assert closings(events) == {call_id: 1}
    assert result_of(events, call_id)["error"]["code"] == ABANDONED_CODE
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]
