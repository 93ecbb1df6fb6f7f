"""Clear (checks 29-30): history emptied in place; instructions, tools, state and usage kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eve_runtime.messages import SystemMessage
from eve_runtime.models import TestModel
from eve_runtime.models.base import ModelRequest
from tests.engine.test_approvals import TOOLS, calls, park, respond
from tests.engine.test_limits import LIMITED, LONG
from tests.engine.test_state import STATE_TOOLS
from tests.harness import (
    Harness,
    last_reply,
    make_harness,
    of_type,
    types,
)

pytestmark = pytest.mark.anyio


class Recording(TestModel):
    def __init__(self) -> None:
        super().__init__("test")
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        return super().stream(request)


async def test_clear_empties_history_and_keeps_instructions_tools_state_and_usage(tmp_path: Path) -> None:
    """Check 29 and the recording o_clear_and_compact: `context.cleared` then `session.waiting`; the next
    turn sees no earlier message but the same system instructions, tools and `define_state` values."""
    model = Recording()
    h = await make_harness(tmp_path, STATE_TOOLS, models={"test": model})
    sid = await h.create("/call visit {}")
    events = await h.turns(sid, 1)
    assert last_reply(events) == "visit -> 1"
    usage = events[-1]["data"]["usage"]
    await h.rt.deliver(sid, "clear", {})
    events = await h.turns(sid, 2)
    assert types(events)[-2:] == ["context.cleared", "session.waiting"]
    cleared = of_type(events, "context.cleared")[0]
    assert cleared["data"] == {"sequence": 1, "sessionId": sid, "turnId": "turn_1"}
    assert cleared["meta"]["deliveryIds"] == events[0]["meta"]["deliveryIds"]
    assert events[-1]["data"]["usage"] == usage
    assert await h.store.load_history(sid) == []
    first = model.requests[0]

    await h.restart()  # the cleared history is what recovery reads too
    await h.send(sid, "/call visit {}")
    events = await h.turns(sid, 3)
    await h.stop()
    assert of_type(events, "turn.started")[-1]["data"]["turnId"] == "turn_1"
    assert last_reply(events) == "visit -> 2"  # the state value survived the clear
    after = model.requests[-2]  # the first step of the turn after the clear
    system = [m for m in after.messages if isinstance(m, SystemMessage)]
    assert system == [m for m in first.messages if isinstance(m, SystemMessage)] and system
    assert [t.name for t in after.tools] == [t.name for t in first.tools]
    assert [(m.role, m.content) for m in after.messages if not isinstance(m, SystemMessage)] == [
        ("user", "/call visit {}")
    ]


async def test_clear_while_an_approval_is_pending_cancels_it_first(tmp_path: Path) -> None:
    """Check 30: the request resolves `cancelled` before `context.cleared`; none is open afterwards."""
    h = await make_harness(tmp_path, TOOLS)
    sid, request_id = await park(h)
    await h.rt.deliver(sid, "clear", {})
    events = await h.turns(sid, 1)
    assert types(events)[-4:] == ["input.resolved", "turn.cancelled", "context.cleared", "session.waiting"]
    resolution = of_type(events, "input.resolved")[0]["data"]["resolutions"][0]
    assert (resolution["requestId"], resolution["outcome"]) == (request_id, "cancelled")
    assert of_type(events, "context.cleared")[0]["data"]["turnId"] == "turn_1"
    assert await h.store.load_history(sid) == []
    checkpoint = await h.store.load_checkpoint(sid)
    assert checkpoint is not None and json.loads(checkpoint)["turn"] is None
    await respond(h, sid, (request_id, "approve"))  # too late: it approves nothing
    events = await h.turns(sid, 2)
    await h.stop()
    assert calls(h) == []
    assert "does not authorize" in last_reply(events)


async def test_clear_during_a_turn_waits_for_its_boundary(harness: Harness) -> None:
    sid = await harness.create("/delay 30\n/reply a slow answer")
    await harness.wait_for(sid, lambda events: "step.started" in types(events))
    await harness.rt.deliver(sid, "clear", {})
    events = await harness.turns(sid, 2)
    kinds = types(events)
    assert kinds.index("turn.completed") < kinds.index("context.cleared")
    assert kinds[-2:] == ["context.cleared", "session.waiting"]
    assert last_reply(events) == "a slow answer"


async def test_clear_drops_the_compaction_summary_too(harness: Harness) -> None:
    sid = await harness.create("hello")
    await harness.turns(sid, 1)
    await harness.rt.deliver(sid, "compact", {})
    await harness.turns(sid, 2)
    assert len(await harness.store.load_history(sid)) == 2
    await harness.rt.deliver(sid, "clear", {})
    await harness.turns(sid, 3)
    assert await harness.store.load_history(sid) == []
    checkpoint = await harness.store.load_checkpoint(sid)
    assert checkpoint is not None and json.loads(checkpoint)["summary"] is None


async def test_clear_withdraws_a_session_limit_prompt(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, LIMITED)
    sid = await h.create(f'/call get_weather {{"city": "Rome"}}\n{LONG}')
    await h.wait_for(sid, lambda events: bool(events) and events[-1]["type"] == "turn.waiting")
    await h.rt.deliver(sid, "clear", {})
    events = await h.turns(sid, 1)
    await h.stop()
    assert types(events)[-4:] == ["input.resolved", "turn.cancelled", "context.cleared", "session.waiting"]
    resolution = of_type(events, "input.resolved")[0]["data"]["resolutions"][0]
    assert (resolution["kind"], resolution["outcome"]) == ("session-limit", "cancelled")
