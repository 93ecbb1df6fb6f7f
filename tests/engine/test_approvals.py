"""Approvals: parking on a person, answers by id and by text, denial, steering, cancel, restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.messages import Message, ToolMessage, UserMessage
from eve_runtime.models import FunctionInfo, FunctionModel, TestModel
from eve_runtime.models.base import ModelRequest
from tests.harness import Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio

TOOLS = {
    "agent/tools/dangerous_action.py": '''
from eve_runtime import tool

CALLS = []

@tool(needs_approval=True)
def dangerous_action(target: str) -> dict:
    """Do something that needs a person's approval."""
    CALLS.append(target)
    return {"done": True, "target": target}
''',
    "agent/tools/careful.py": '''
from eve_runtime import tool
from eve_runtime.authoring.approval import once

@tool(needs_approval=once())
def careful(n: int) -> int:
    """Asks once per session."""
    return n
''',
    "agent/tools/policy.py": '''
from eve_runtime import tool
from eve_runtime.authoring.approval import ApprovalDecision

def decide(check):
    if check.tool_input["amount"] > 100:
        return ApprovalDecision("denied", "Amounts over 100 are never allowed.")
    return "approved" if check.tool_input["amount"] < 10 else "user-approval"

@tool(needs_approval=decide)
def policy(amount: int) -> int:
    """Pays an amount."""
    return amount
''',
}


def calls(h: Harness) -> list[str]:
    assert h.app.root is not None
    function = h.app.root.tools["dangerous_action"].function
    assert function is not None
    ledger: list[str] = function.__globals__["CALLS"]
    return ledger


class Recording(TestModel):
    def __init__(self) -> None:
        super().__init__("test")
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        return super().stream(request)


@pytest.fixture
async def h(tmp_path: Path) -> Harness:
    return await make_harness(tmp_path, TOOLS)


def parked(events: list[dict[str, Any]]) -> bool:
    return bool(events) and events[-1]["type"] == "turn.waiting"


async def park(h: Harness, message: str = '/call dangerous_action {"target": "db"}') -> tuple[str, str]:
    sid = await h.create(message)
    events = await h.wait_for(sid, parked)
    request = of_type(events, "input.requested")[-1]["data"]["requests"][0]
    return sid, str(request["requestId"])


async def respond(h: Harness, sid: str, *answers: tuple[str, str]) -> str:
    delivery = await h.rt.deliver(
        sid, "responses", {"inputResponses": [{"requestId": r, "optionId": o} for r, o in answers]}
    )
    return delivery.id


async def test_an_approval_parks_the_turn_without_running_the_tool(h: Harness) -> None:
    sid, request_id = await park(h)
    events = await h.events(sid)
    compact = [t for t in types(events) if t != "action.input.appended"]
    assert compact[-5:] == ["step.started", "actions.requested", "step.completed", "input.requested", "turn.waiting"]
    request = of_type(events, "input.requested")[0]["data"]["requests"][0]
    assert request["kind"] == "tool-approval" and request["prompt"] == "Approve Dangerous action?"
    assert request["options"] == [{"id": "approve", "label": "Approve"}, {"id": "cancel", "label": "Cancel"}]
    assert request["action"]["toolName"] == "dangerous_action" and request["action"]["input"] == {"target": "db"}
    assert request_id.startswith("aitxt-") and len(request_id) == 30
    assert request["display"] == "confirmation" and request["allowFreeform"] is False
    waiting = events[-1]["data"]
    assert waiting["on"] == "input" and waiting["turnId"] == "turn_0" and "usage" in waiting
    assert "session.waiting" not in types(events) and "action.result" not in types(events)
    assert calls(h) == []
    await h.stop()


async def test_approve_runs_the_tool_in_the_next_step_of_the_same_turn(h: Harness) -> None:
    sid, request_id = await park(h)
    await respond(h, sid, (request_id, "approve"))
    events = await h.turns(sid, 1)
    await h.stop()
    after = events[events.index(of_type(events, "turn.waiting")[0]) + 1 :]
    compact = [t for t in types(after) if t != "message.appended"]
    assert compact == [
        "approval.settled",
        "input.resolved",
        "step.started",
        "action.result",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    settled = of_type(events, "approval.settled")[0]["data"]
    assert settled["outcome"] == "approved" and settled["requestId"] == request_id and settled["stepIndex"] == 0
    assert settled["responderPrincipalId"] == "token"
    resolution = of_type(events, "input.resolved")[0]["data"]["resolutions"]
    assert resolution == [
        {
            "kind": "tool-approval",
            "outcome": "approved",
            "requestId": request_id,
            "response": {"optionId": "approve", "requestId": request_id},
        }
    ]
    result = of_type(events, "action.result")[0]["data"]
    assert result["stepIndex"] == 1 and result["status"] == "completed"
    assert types(events).count("turn.started") == 1
    assert calls(h) == ["db"]
    assert last_reply(events) == 'dangerous_action -> {"done":true,"target":"db"}'


@pytest.mark.parametrize("negative", ["cancel", "deny"])
async def test_deny_rejects_the_call_without_running_it(h: Harness, negative: str) -> None:
    sid, request_id = await park(h)
    await respond(h, sid, (request_id, negative))
    events = await h.turns(sid, 1)
    await h.stop()
    assert of_type(events, "approval.settled")[0]["data"]["outcome"] == "cancelled"
    assert of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["outcome"] == "denied"
    result = of_type(events, "action.result")[0]["data"]
    assert result["status"] == "rejected" and result["stepIndex"] == 0
    assert result["error"] == {"code": "TOOL_EXECUTION_DENIED", "message": "Tool execution was denied."}
    assert result["result"]["output"]["approval"] == {"requestId": request_id, "status": "denied"}
    assert result["result"]["output"]["tool"] == {"result": "not_run"}
    ordered = types(events)
    assert ordered.index("action.result") < ordered.index("step.started", ordered.index("input.resolved"))
    assert calls(h) == []
    assert last_reply(events) == 'dangerous_action -> "Tool execution was denied."'


async def test_a_batch_resolves_once_every_approval_is_answered(h: Harness) -> None:
    sid = await h.create('/call dangerous_action {"target": "a"}\n/call dangerous_action {"target": "b"}')
    events = await h.wait_for(sid, parked)
    first, second = (r["requestId"] for r in of_type(events, "input.requested")[0]["data"]["requests"])
    await respond(h, sid, (first, "approve"))
    events = await h.wait_for(sid, lambda ev: len(of_type(ev, "turn.waiting")) == 2)
    assert "input.resolved" not in types(events) and len(of_type(events, "approval.settled")) == 1
    await respond(h, sid, (second, "cancel"))
    events = await h.turns(sid, 1)
    await h.stop()
    outcomes = [r["outcome"] for r in of_type(events, "input.resolved")[0]["data"]["resolutions"]]
    assert outcomes == ["approved", "denied"]
    assert calls(h) == ["a"]


async def test_a_plain_text_answer_matching_an_option_approves(h: Harness) -> None:
    sid, request_id = await park(h)
    await h.send(sid, "Approve")
    events = await h.turns(sid, 1)
    await h.stop()
    after = events[events.index(of_type(events, "turn.waiting")[0]) + 1 :]
    assert types(after)[:2] == ["approval.settled", "input.resolved"]
    assert "message.received" not in types(after)
    response = of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["response"]
    assert response == {"optionId": "approve", "requestId": request_id}
    assert calls(h) == ["db"]


async def test_unrelated_text_withdraws_the_approval_and_steers(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, TOOLS, models={"test": model})
    sid, request_id = await park(h)
    first = of_type(await h.events(sid), "turn.started")[0]["meta"]["deliveryIds"]
    steering = await h.send(sid, "/reply never mind")
    events = await h.turns(sid, 1)
    await h.stop()
    after = events[events.index(of_type(events, "turn.waiting")[0]) + 1 :]
    # the withdrawal is the new message's too: eve's client follows a send() by its delivery id
    assert {tuple(e["meta"]["deliveryIds"]) for e in after} == {(*first, steering)}
    assert [t for t in types(after) if t != "message.appended"] == [
        "input.resolved",
        "action.result",
        "message.received",
        "step.started",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    assert of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["outcome"] == "ignored"
    result = of_type(events, "action.result")[0]["data"]
    assert result["status"] == "rejected"
    assert result["result"]["output"]["approval"]["status"] == "ignored"
    # eve keeps the denial's code for a withdrawn approval (observed, eve-observed.md #6)
    ignored = {"code": "TOOL_EXECUTION_DENIED", "message": "Ignored because the user continued without responding."}
    assert result["error"] == ignored
    assert {k: result["result"]["output"][k] for k in ("code", "message")} == ignored
    assert of_type(events, "message.received")[1]["data"]["turnId"] == "turn_0"
    assert calls(h) == []
    tool_messages = [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    assert tool_messages[-1].content == "Ignored because the user continued without responding."
    assert last_reply(events) == "never mind"


async def test_cancel_while_parked(h: Harness) -> None:
    sid, request_id = await park(h)
    assert await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    assert types(events)[-3:] == ["input.resolved", "turn.cancelled", "session.waiting"]
    assert of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["outcome"] == "cancelled"
    # a later answer to that request authorizes nothing: it reaches the model as text in a new turn
    await respond(h, sid, (request_id, "approve"))
    events = await h.turns(sid, 2)
    await h.stop()
    assert calls(h) == []
    assert "does not authorize" in last_reply(events)
    assert of_type(events, "message.received")[-1]["data"]["message"] == "approve"


async def test_cancelling_twice_cancels_once(h: Harness) -> None:
    sid, _request_id = await park(h)
    assert await h.rt.cancel(sid)
    await h.rt.cancel(sid)
    await h.turns(sid, 1)
    await h.send(sid, "/reply after")
    events = await h.turns(sid, 2)
    await h.stop()
    assert types(events).count("turn.cancelled") == 1
    assert types(events).count("input.resolved") == 1
    assert last_reply(events) == "after"


async def test_a_parked_approval_survives_a_restart_and_runs_once(h: Harness) -> None:
    sid, request_id = await park(h)
    await h.restart()
    for _ in range(100):  # the restart looks at the session once, then holds no task for it
        if not h.rt.actors:
            break
        await asyncio.sleep(0.01)
    assert len(h.rt.actors) == 0
    await respond(h, sid, (request_id, "approve"))
    events = await h.turns(sid, 1)
    await h.restart()
    await h.stop()
    assert calls(h) == ["db"]
    assert types(events).count("turn.started") == 1
    assert last_reply(events) == 'dangerous_action -> {"done":true,"target":"db"}'


async def test_once_asks_only_the_first_time(h: Harness) -> None:
    sid, request_id = await park(h, '/call careful {"n": 1}')
    await respond(h, sid, (request_id, "approve"))
    await h.turns(sid, 1)
    await h.send(sid, '/call careful {"n": 2}')
    events = await h.turns(sid, 2)
    await h.stop()
    assert len(of_type(events, "input.requested")) == 1
    assert last_reply(events) == "careful -> 2"


async def test_policies_decide_per_call(h: Harness) -> None:
    sid = await h.create('/call policy {"amount": 5}\n/call policy {"amount": 500}')
    events = await h.turns(sid, 1)
    await h.stop()
    assert "input.requested" not in types(events)
    results = {r["data"]["result"]["callId"]: r["data"] for r in of_type(events, "action.result")}
    statuses = sorted(r["status"] for r in results.values())
    assert statuses == ["completed", "rejected"]
    rejected = next(r for r in results.values() if r["status"] == "rejected")
    assert rejected["error"]["message"] == "Amounts over 100 are never allowed."
    assert last_reply(events).splitlines() == ["policy -> 5", 'policy -> "Amounts over 100 are never allowed."']


async def test_an_answer_to_an_unknown_request_withdraws_the_pending_one(h: Harness) -> None:
    sid, request_id = await park(h)
    first = of_type(await h.events(sid), "turn.started")[0]["meta"]["deliveryIds"]
    await respond(h, sid, ("aitxt-nope", "approve"))
    events = await h.turns(sid, 1)
    await respond(h, sid, (request_id, "approve"))  # too late: that request is closed, so it is text too
    events = await h.turns(sid, 2)
    await h.stop()
    assert calls(h) == []
    after = events[events.index(of_type(events, "turn.waiting")[0]) + 1 :]
    assert [t for t in types(after) if t != "message.appended"][:4] == [
        "input.resolved",
        "action.result",
        "message.received",
        "step.started",
    ]
    (resolution,) = of_type(events, "input.resolved")[0]["data"]["resolutions"]
    assert (resolution["requestId"], resolution["outcome"]) == (request_id, "ignored")
    received = of_type(events, "message.received")
    assert (received[1]["data"]["message"], received[1]["data"]["turnId"]) == ("approve", "turn_0")
    assert received[1]["meta"]["deliveryIds"] == first  # as in eve: answers join without their delivery id
    assert "does not authorize" in of_type(events, "message.completed")[0]["data"]["message"]
    assert [e["data"]["turnId"] for e in of_type(events, "turn.started")] == ["turn_0", "turn_1"]


async def test_an_answer_without_an_option_is_invalid(h: Harness) -> None:
    sid, request_id = await park(h)
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id}]})
    events = await h.turns(sid, 1)
    await h.stop()
    assert calls(h) == [] and "approval.settled" not in types(events)
    (resolution,) = of_type(events, "input.resolved")[0]["data"]["resolutions"]
    assert resolution == {
        "kind": "tool-approval",
        "outcome": "invalid",
        "requestId": request_id,
        "response": {"requestId": request_id},
    }
    result = of_type(events, "action.result")[0]["data"]
    assert result["status"] == "rejected"
    assert result["error"] == {"code": "TOOL_EXECUTION_DENIED", "message": "Invalid approval response."}
    assert result["result"]["output"]["approval"] == {"requestId": request_id, "status": "invalid"}
    assert last_reply(events) == 'dangerous_action -> "Invalid approval response."'


async def test_function_model_sees_the_denial(tmp_path: Path) -> None:
    seen: list[list[Message]] = []

    def respond_(messages: list[Message], info: FunctionInfo) -> Any:
        seen.append(messages)
        if info.call_count == 1:
            from eve_runtime.messages import ToolCall

            return ToolCall(id="c1", name="dangerous_action", arguments={"target": "x"})
        return "ok"

    h = await make_harness(tmp_path, TOOLS, models={"test": FunctionModel(respond_)})
    sid = await h.create("go")
    events = await h.wait_for(sid, parked)
    request_id = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await respond(h, sid, (request_id, "cancel"))
    await h.turns(sid, 1)
    await h.stop()
    assert [m.content for m in seen[-1] if isinstance(m, ToolMessage)] == ["Tool execution was denied."]
    assert [m.content for m in seen[-1] if isinstance(m, UserMessage)] == ["go"]
