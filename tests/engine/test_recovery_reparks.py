"""Recovery parks a turn again on approvals its last step asked for when the park's checkpoint was lost.

The crash test (`tests/crash/test_crash.py`, crash point `after-input-requested`) kills a real
process in that window; these read `recover_steps` directly on the events such a kill leaves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eve_runtime.engine.recovery import ABANDONED_TEXT, recover_steps
from eve_runtime.events.requests import approval_request
from eve_runtime.messages import AssistantMessage, ToolMessage
from eve_runtime.project.runtime_agent import RuntimeAgent
from tests.harness import Event, make_harness

pytestmark = pytest.mark.anyio

GUARDED = {
    "agent/tools/guarded.py": (
        "from eve_runtime import tool\n\n@tool(needs_approval=True)\n"
        'def guarded(label: str) -> str:\n    """Needs a yes."""\n    return label\n'
    )
}


def at(step: int = 0) -> dict[str, Any]:
    return {"sequence": 0, "stepIndex": step, "turnId": "turn_0"}


@pytest.fixture
async def agent(tmp_path: Path) -> RuntimeAgent:
    h = await make_harness(tmp_path, GUARDED)
    await h.stop()
    assert h.app.root is not None
    return h.app.root


def asked(call_id: str = "c1", request_id: str = "req-1") -> list[Event]:
    """What the killed process left: the call requested, the step completed, the approval requested."""
    action = {"callId": call_id, "input": {"label": "x"}, "kind": "tool-call", "toolName": "guarded"}
    request = approval_request(request_id, call_id, "guarded", {"label": "x"})
    return [
        {"type": "actions.requested", "data": {"actions": [action], **at(0)}},
        {"type": "step.completed", "data": {"finishReason": "tool-calls", **at(0)}},
        {"type": "input.requested", "data": {"requests": [request], **at(0)}},
    ]


async def test_an_unanswered_approval_parks_the_turn_again_without_closing_the_call(agent: RuntimeAgent) -> None:
    recovered = recover_steps(agent, "turn_0", asked(), 0)
    assert recovered.awaiting is not None
    assert recovered.awaiting.step_index == 0
    [pending] = recovered.awaiting.requests
    assert (pending.request_id, pending.kind, pending.option_id) == ("req-1", "tool-approval", None)
    assert pending.call is not None and (pending.call.id, pending.call.name) == ("c1", "guarded")
    assert pending.request == asked()[2]["data"]["requests"][0]  # verbatim, as the client saw it
    assert recovered.closings == [] and not recovered.interrupted and recovered.next_step == 1
    [message] = recovered.history  # the call waits: no answer in history yet, as the park would have saved it
    assert isinstance(message, AssistantMessage) and [c.id for c in message.tool_calls] == ["c1"]
    assert not recovered.waiting_written


async def test_a_durable_turn_waiting_is_not_written_twice(agent: RuntimeAgent) -> None:
    waiting: Event = {"type": "turn.waiting", "data": {"on": "input", "sequence": 0, "turnId": "turn_0"}}
    recovered = recover_steps(agent, "turn_0", [*asked(), waiting], 0)
    assert recovered.awaiting is not None and recovered.waiting_written


async def test_an_answered_request_is_not_parked_on_again(agent: RuntimeAgent) -> None:
    resolved: Event = {
        "type": "input.resolved",
        "data": {"resolutions": [{"kind": "tool-approval", "outcome": "approved", "requestId": "req-1"}], **at(0)},
    }
    recovered = recover_steps(agent, "turn_0", [*asked(), resolved], 0)
    assert recovered.awaiting is None
    assert [c.outcome.call.id for c in recovered.closings] == ["c1"]
    assert isinstance(recovered.history[-1], ToolMessage) and recovered.history[-1].content == ABANDONED_TEXT


async def test_a_request_of_an_earlier_step_is_not_parked_on(agent: RuntimeAgent) -> None:
    later: list[Event] = [
        {"type": "step.started", "data": at(1)},
        {"type": "message.completed", "data": {"message": "", **at(1)}},
    ]
    recovered = recover_steps(agent, "turn_0", [*asked(), *later], 0)
    assert recovered.awaiting is None and [c.outcome.call.id for c in recovered.closings] == ["c1"]
