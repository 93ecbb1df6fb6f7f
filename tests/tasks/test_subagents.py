"""Subagents and tasks: child sessions, receipts, results, waits, cancels, limits and restarts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.messages import Message, ToolCall, ToolMessage, UserMessage
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.tasks.delegation import MAX_WORKING_TASKS
from tests.harness import Event, Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio

HELPER = {
    "agent/subagents/helper/agent.py": (
        "from eve_runtime import define_agent\n\n"
        'agent = define_agent(model="test", description="A helper that answers questions.")\n'
    ),
    "agent/subagents/helper/instructions.md": "You help.\n",
    "agent/subagents/helper/tools/note.py": '''
from pathlib import Path

def note(path: str, text: str) -> str:
    """Append a line to a file (a side effect the tests count)."""
    with Path(path).open("a") as handle:
        handle.write(text + "\\n")
    return "noted"
''',
}


def call(tool: str, **arguments: Any) -> str:
    return f"/call {tool} {json.dumps(arguments)}"


@pytest.fixture
async def h(tmp_path: Path) -> Harness:
    return await make_harness(tmp_path, HELPER)


def settled(events: list[Event]) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(events, "task.settled")]


async def test_a_subagent_call_opens_a_child_session_and_its_reply_settles_the_task(h: Harness) -> None:
    sid = await h.create(call("helper", message="/reply forty-two"))
    events = await h.turns(sid, 1)
    await h.stop()
    names = types(events)
    requested = of_type(events, "actions.requested")[0]["data"]
    action = requested["actions"][0]
    assert action["kind"] == "subagent-call"
    assert (action["name"], action["subagentName"], action["nodeId"]) == ("helper", "helper", "subagents/helper")
    assert action["description"].startswith("A helper that answers questions.")
    assert requested["presentation"] == {action["callId"]: {"label": "Helper: /reply forty-two"}}
    # the receipt comes right after the step, then the task and the child session
    assert names.index("step.completed") < names.index("task.started") < names.index("action.result")
    assert names.index("action.result") < names.index("agent.started") < names.index("task.settled")
    started = of_type(events, "task.started")[0]["data"]
    task_id = started["taskId"]
    assert started == {
        "callId": action["callId"],
        "kind": "agent",
        "name": "helper",
        "taskId": task_id,
        "turnId": "turn_0",
    }
    assert task_id.startswith("helper-") and len(task_id) == len("helper-") + 6
    receipt = of_type(events, "action.result")[0]["data"]
    assert receipt["status"] == "completed"
    assert receipt["result"]["output"] == (
        f"Started task {task_id}. Its result will arrive in a <task_result> message. "
        f"To send it another message, call helper again with taskId {task_id}."
    )
    agent_started = of_type(events, "agent.started")[0]["data"]
    child = agent_started["sessionId"]
    assert agent_started["streamPath"] == f"/eve/v1/session/{child}/stream"
    assert agent_started["taskId"] == task_id
    assert settled(events) == [
        {
            "callId": action["callId"],
            "kind": "agent",
            "name": "helper",
            "output": "forty-two",
            "status": "completed",
            "taskId": task_id,
            "turnId": "turn_0",
        }
    ]
    # no turn ends while its task works; the result reaches the model, not the stream
    assert names.index("task.settled") < names.index("turn.completed")
    assert names[-2:] == ["turn.completed", "session.waiting"]
    assert "session.waiting" not in names[:-1]


async def test_the_child_session_has_its_own_stream_and_knows_its_parent(h: Harness) -> None:
    sid = await h.create(call("helper", message="hello child"))
    events = await h.turns(sid, 1)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    child_events = await h.turns(child, 1)
    await h.stop()
    started = child_events[0]
    assert started["type"] == "session.started"
    assert started["data"]["runtime"]["agentName"] == "helper"
    call_id = of_type(events, "task.started")[0]["data"]["callId"]
    assert started["data"]["invocation"] == {
        "kind": "subagent",
        "name": "helper",
        "parentCallId": call_id,
        "parentSessionId": sid,
        "parentTurnId": "turn_0",
    }
    received = of_type(child_events, "message.received")[0]["data"]["message"]
    assert received.startswith('You are the subagent "helper".\nDescription: A helper that answers questions.')
    assert received.endswith("Caller message:\nhello child")
    # the child's reply (an echo of what it read) is the task's output
    assert settled(events)[0]["output"] == last_reply(child_events)


PARENT_ON_FUNCTION = {
    "agent/agent.py": 'from eve_runtime import define_agent\n\nagent = define_agent(model="test/parent")\n'
}


async def parent_harness(tmp_path: Path, respond: Any) -> Harness:
    """The root agent answers through `respond`; the helper subagent runs on the `test` model."""
    return await make_harness(
        tmp_path, {**HELPER, **PARENT_ON_FUNCTION}, models={"test/parent": FunctionModel(respond)}
    )


async def test_the_model_reads_the_receipt_the_tasks_note_and_the_result(tmp_path: Path) -> None:
    seen: list[list[Message]] = []
    offered: list[list[str]] = []

    def respond(messages: list[Message], info: FunctionInfo) -> Any:
        seen.append(list(messages))
        offered.append([t.name for t in info.tools])
        if info.call_count == 1:
            return ToolCall(id="c1", name="helper", arguments={"message": "/reply the answer"})
        return "done"

    h = await parent_harness(tmp_path, respond)
    sid = await h.create("go")
    events = await h.turns(sid, 1)
    await h.stop()
    task_id = of_type(events, "task.started")[0]["data"]["taskId"]
    framework = ["bash", "read_file", "write_file", "web_fetch"]
    assert offered[0] == ["get_weather", *framework, "helper", "agent", "eve__task_wait", "eve__task_cancel"]
    second = seen[1]
    receipts = [m.content for m in second if isinstance(m, ToolMessage)]
    assert receipts == [of_type(events, "action.result")[0]["data"]["result"]["output"]]
    users = [m.content for m in seen[-1] if isinstance(m, UserMessage)]
    assert f'<task_result id="{task_id}" tool="helper" status="completed">the answer</task_result>' in users
    assert users[-1] == f'[Tasks]\n<tasks>\n</tasks>\n<idle>\n<task id="{task_id}" tool="helper"/>\n</idle>'
    assert last_reply(events) == "done"


async def test_a_later_call_with_the_task_id_reaches_the_same_child(h: Harness) -> None:
    sid = await h.create(call("helper", message="/reply first"))
    events = await h.turns(sid, 1)
    task_id = of_type(events, "task.started")[0]["data"]["taskId"]
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    await h.send(sid, call("helper", message="/reply second", taskId=task_id))
    events = await h.turns(sid, 2)
    await h.stop()
    second = events[events.index(of_type(events, "turn.started")[1]) :]
    assert of_type(second, "agent.started") == []  # no new child
    assert of_type(second, "task.started")[0]["data"]["taskId"] == task_id
    assert of_type(second, "action.result")[0]["data"]["result"]["output"] == (
        f"Sent to task {task_id}. Its reply will arrive in a <task_result> message."
    )
    assert [s["output"] for s in settled(events)] == ["first", "second"]
    child_events = await h.events(child)
    assert len(of_type(child_events, "turn.completed")) == 2


async def test_task_errors_unknown_task_and_wrong_tool(h: Harness) -> None:
    sid = await h.create(call("eve__task_cancel", taskId="nope") + "\n" + call("helper", message="x", taskId="nope"))
    events = await h.turns(sid, 1)
    await h.stop()
    results = {e["data"]["result"]["toolName"]: e["data"] for e in of_type(events, "action.result")}
    assert results["eve__task_cancel"]["status"] == "failed"
    assert results["eve__task_cancel"]["error"]["code"] == "UNKNOWN_TASK"
    assert results["helper"]["error"]["code"] == "UNKNOWN_TASK"
    assert of_type(events, "task.started") == []
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]


async def test_at_most_32_tasks_work_at_once(h: Harness) -> None:
    lines = [call("helper", message=f"/delay 100\n/reply {n}") for n in range(MAX_WORKING_TASKS + 1)]
    sid = await h.create("\n".join(lines))
    events = await h.turns(sid, 1, timeout=20)
    await h.stop()
    results = [e["data"] for e in of_type(events, "action.result")]
    refused = [r for r in results if r["status"] == "failed"]
    assert len(of_type(events, "task.started")) == MAX_WORKING_TASKS
    assert len(refused) == 1 and refused[0]["error"]["code"] == "TOO_MANY_TASKS"
    assert len(settled(events)) == MAX_WORKING_TASKS


async def test_cancel_stops_the_working_tasks_and_their_children(h: Harness) -> None:
    sid = await h.create(call("helper", message="/delay 300\nslow work"))
    events = await h.wait_for(sid, lambda ev: "turn.waiting" in types(ev))
    assert of_type(events, "turn.waiting")[-1]["data"]["on"] == "tasks"
    assert "session.waiting" not in types(events)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    child_events = await h.turns(child, 1)
    await h.stop()
    names = types(events)
    assert names[-3:] == ["task.settled", "turn.cancelled", "session.waiting"]
    assert settled(events)[0]["status"] == "cancelled"
    assert settled(events)[0]["cancel"] == {"reason": "turn_cancelled"}
    assert "turn.cancelled" in types(child_events)
    # the child's late report changes nothing in the parent
    assert len(settled(await h.events(sid))) == 1


async def test_a_cancel_between_turns_stops_the_working_tasks(h: Harness) -> None:
    # a turn answered through its output schema ends while the task it started still works
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}}
    started = call("helper", message="/delay 300\nslow work") + "\n" + call("eve__reply", answer=1)
    sid = await h.create(started, outputSchema=schema)
    events = await h.turns(sid, 1)
    assert types(events)[-2:] == ["turn.completed", "session.waiting"] and not settled(events)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    await h.rt.cancel(sid)
    events = await h.wait_for(sid, lambda ev: bool(settled(ev)))
    child_events = await h.turns(child, 1)
    await h.stop()
    assert types(events)[-1] == "task.settled"  # no turn to end: nothing else is emitted
    task = of_type(events, "task.started")[0]["data"]
    assert settled(events) == [
        {
            "callId": task["callId"],
            "cancel": {"reason": "turn_cancelled"},
            "kind": "agent",
            "name": "helper",
            "status": "cancelled",
            "taskId": task["taskId"],
            "turnId": "turn_0",
        }
    ]
    assert events[-1]["meta"]["deliveryIds"] == events[-2]["meta"]["deliveryIds"]
    assert "turn.cancelled" in types(child_events)


async def test_task_wait_parks_until_a_result_then_answers_the_call(h: Harness) -> None:
    sid = await h.create(call("helper", message="/delay 50\n/reply late") + "\n" + call("eve__task_wait"))
    events = await h.turns(sid, 1)
    await h.stop()
    names = types(events)
    waiting = of_type(events, "turn.waiting")
    assert [w["data"]["on"] for w in waiting] == ["tasks"]
    assert names.index("turn.waiting") < names.index("task.settled") < names.index("turn.completed")
    # the wait's own call has no action.result on the stream; the model got its answer in history
    assert [r["data"]["result"]["toolName"] for r in of_type(events, "action.result")] == ["helper"]


async def test_task_wait_with_nothing_working_answers_at_once(h: Harness) -> None:
    sid = await h.create(call("eve__task_wait", timeoutSeconds=5))
    events = await h.turns(sid, 1)
    await h.stop()
    result = of_type(events, "action.result")[0]["data"]
    assert result["result"]["output"] == "No task is working."
    assert "turn.waiting" not in types(events)


async def test_the_built_in_agent_tool_delegates_to_a_copy_of_the_root(h: Harness) -> None:
    sid = await h.create(call("agent", message="/reply copied"))
    events = await h.turns(sid, 1)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    child_events = await h.turns(child, 1)
    await h.stop()
    assert of_type(events, "actions.requested")[0]["data"]["actions"][0]["nodeId"] == "agent"
    assert settled(events)[0]["output"] == "copied"
    assert h.app.root is not None
    assert child_events[0]["data"]["runtime"]["agentName"] == h.app.root.name


async def test_a_child_never_gets_the_agent_tool(tmp_path: Path) -> None:
    offered: dict[str, list[str]] = {}

    def respond(messages: list[Message], info: FunctionInfo) -> Any:
        first = next(m.content for m in messages if isinstance(m, UserMessage) and m.content != "You are a test agent.")
        who = "child" if first.startswith("You are the subagent") else "root"
        offered[who] = [t.name for t in info.tools]
        if info.call_count == 1:
            return ToolCall(id="c1", name="agent", arguments={"message": "hi"})
        return "ok"

    h = await make_harness(tmp_path, models={"test": FunctionModel(respond)})
    sid = await h.create("go")
    await h.turns(sid, 1)
    await h.stop()
    assert "agent" in offered["root"]
    assert offered["child"] == ["get_weather", "bash", "read_file", "write_file", "web_fetch"]  # never `agent`


async def test_tool_false_removes_the_agent_tool(tmp_path: Path) -> None:
    agent_py = 'from eve_runtime import define_agent\n\nagent = define_agent(model="test", tool=False)\n'
    h = await make_harness(tmp_path, {"agent/agent.py": agent_py})
    sid = await h.create(call("agent", message="hi"))
    events = await h.turns(sid, 1)
    await h.stop()
    assert of_type(events, "task.started") == []
    assert of_type(events, "action.result")[0]["data"]["status"] == "failed"


async def test_child_usage_counts_in_the_parents_totals(h: Harness) -> None:
    sid = await h.create(call("helper", message="count my words please"))
    events = await h.turns(sid, 1)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    child_events = await h.turns(child, 1)
    await h.stop()
    own = sum(e["data"]["usage"]["inputTokens"] for e in of_type(events, "step.completed"))
    child_total = of_type(child_events, "session.waiting")[-1]["data"]["usage"]["inputTokens"]
    total = of_type(events, "session.waiting")[-1]["data"]["usage"]["inputTokens"]
    assert child_total > 0
    assert total == own + child_total


async def test_a_failed_child_turn_settles_the_task_as_failed(h: Harness) -> None:
    sid = await h.create(call("helper", message="/fail the provider refused"))
    events = await h.turns(sid, 1)
    await h.stop()
    result = settled(events)[0]
    assert result["status"] == "failed"
    assert result["error"]["code"] == "MODEL_CALL_FAILED"
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]


async def test_a_restart_while_the_child_works_settles_the_task_once(h: Harness, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    note = call("note", path=str(ledger), text="once")
    sid = await h.create(call("helper", message=f"/delay 200\n{note}"))
    events = await h.wait_for(sid, lambda ev: "turn.waiting" in types(ev))
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    await h.restart()
    events = await h.turns(sid, 1, timeout=10)
    child_events = await h.turns(child, 1)
    await h.stop()
    assert ledger.read_text() == "once\n"
    assert len(settled(events)) == 1 and settled(events)[0]["status"] == "completed"
    assert "note -> " in settled(events)[0]["output"]
    assert types(child_events).count("turn.completed") == 1


RISKY = {
    "agent/subagents/helper/tools/risky.py": '''
from pathlib import Path

from eve_runtime import tool

@tool(needs_approval=True)
def risky(path: str) -> str:
    """Do something a person must approve."""
    with Path(path).open("a") as handle:
        handle.write("ran\\n")
    return "done"
''',
}


async def relayed_harness(tmp_path: Path) -> tuple[Harness, str, Path]:
    h = await make_harness(tmp_path, {**HELPER, **RISKY})
    ledger = tmp_path / "risky.txt"
    sid = await h.create(call("helper", message=call("risky", path=str(ledger))))
    await h.wait_for(sid, lambda ev: any(e["type"] == "input.requested" for e in ev))
    return h, sid, ledger


async def test_a_childs_approval_is_relayed_to_the_parent_and_answered_there(tmp_path: Path) -> None:
    h, sid, ledger = await relayed_harness(tmp_path)
    events = await h.wait_for(sid, lambda ev: types(ev)[-1] == "turn.waiting")
    requested = of_type(events, "input.requested")[0]["data"]
    task = of_type(events, "task.started")[0]["data"]
    assert (requested["taskId"], requested["callId"]) == (task["taskId"], task["callId"])
    request = requested["requests"][0]
    assert request["kind"] == "tool-approval"
    assert of_type(events, "turn.waiting")[-1]["data"]["on"] == "input"
    assert not ledger.exists()
    await h.rt.deliver(
        sid, "responses", {"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]}
    )
    events = await h.turns(sid, 1)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    child_events = await h.events(child)
    await h.stop()
    assert ledger.read_text() == "ran\n"
    resolved = of_type(events, "input.resolved")[0]["data"]
    assert resolved["taskId"] == task["taskId"]
    assert resolved["resolutions"][0]["outcome"] == "approved"
    names = types(events)
    assert names.index("input.resolved") < names.index("task.settled") < names.index("turn.completed")
    assert settled(events)[0]["output"] == 'risky -> "done"'
    assert of_type(child_events, "approval.settled")[0]["data"]["outcome"] == "approved"


async def test_a_plain_message_never_answers_a_relayed_approval(tmp_path: Path) -> None:
    h, sid, ledger = await relayed_harness(tmp_path)
    await h.send(sid, "approve")
    # the message joins the parent's turn; the child's request stays open and the turn waits again
    events = await h.wait_for(
        sid, lambda ev: types(ev).count("message.received") == 2 and types(ev)[-1] == "turn.waiting"
    )
    assert of_type(events, "message.received")[-1]["data"]["message"] == "approve"
    assert of_type(events, "turn.waiting")[-1]["data"]["on"] == "input"
    assert of_type(events, "input.resolved") == []
    request_id = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, "optionId": "deny"}]})
    events = await h.turns(sid, 1)
    await h.stop()
    assert not ledger.exists()
    assert of_type(events, "input.resolved")[0]["data"]["resolutions"][0]["outcome"] == "denied"
    assert settled(events)[0]["status"] == "completed"


async def test_cancel_withdraws_relayed_requests_before_the_task_settles(tmp_path: Path) -> None:
    h, sid, ledger = await relayed_harness(tmp_path)
    await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    await h.stop()
    assert not ledger.exists()
    names = types(events)
    assert names[-4:] == ["input.resolved", "task.settled", "turn.cancelled", "session.waiting"]
    assert of_type(events, "input.resolved")[-1]["data"]["resolutions"][0]["outcome"] == "cancelled"


ASKING = {
    "agent/subagents/helper/tools/pick.py": '''
from eve_runtime import ToolContext

async def pick(ctx: ToolContext) -> dict:
    """Ask which colour."""
    return dict(await ctx.ask("Which colour?", options=["Red", "Blue"]))
''',
}


async def test_a_structured_answer_to_a_relayed_question_resolves_it_at_once(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, {**HELPER, **ASKING})
    sid = await h.create(call("helper", message=call("pick")))
    events = await h.wait_for(sid, lambda ev: any(e["type"] == "input.requested" for e in ev))
    request_id = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, "optionId": "red"}]})
    events = await h.turns(sid, 1)
    await h.stop()
    resolved = of_type(events, "input.resolved")
    assert [r["data"]["resolutions"][0]["response"] for r in resolved] == [{"requestId": request_id, "optionId": "red"}]
    assert types(events).count("message.received") == 1  # answers are no message
    assert settled(events)[0]["output"] == 'pick -> {"optionId":"red","status":"answered"}'


async def test_a_childs_question_is_relayed_and_answered_on_the_parent(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, {**HELPER, **ASKING})
    sid = await h.create(call("helper", message=call("pick")))
    events = await h.wait_for(sid, lambda ev: any(e["type"] == "input.requested" for e in ev))
    requested = of_type(events, "input.requested")[0]["data"]
    request = requested["requests"][0]
    assert request["kind"] == "question" and request["prompt"] == "Which colour?"
    assert requested["taskId"] == of_type(events, "task.started")[0]["data"]["taskId"]
    answer = await h.send(sid, "blue")  # a plain answer works for a lone relayed question
    events = await h.turns(sid, 1)
    await h.stop()
    resolved = of_type(events, "input.resolved")
    assert len(resolved) == 1  # shown as the answer is routed down; the child's own is not shown again
    assert resolved[0]["data"]["resolutions"] == [
        {
            "kind": "question",
            "outcome": "answered",
            "requestId": request["requestId"],
            "response": {"requestId": request["requestId"], "optionId": "blue"},
        }
    ]
    assert resolved[0]["data"]["taskId"] == requested["taskId"]
    # the message that answers it is recorded, with its delivery id, just before the input.resolved it produces
    at = events.index(resolved[0])
    assert events[at - 1]["type"] == "message.received" and events[at - 1]["data"]["message"] == "blue"
    assert answer in events[at - 1]["meta"]["deliveryIds"] and answer in resolved[0]["meta"]["deliveryIds"]
    assert settled(events)[0]["output"] == 'pick -> {"optionId":"blue","status":"answered"}'
