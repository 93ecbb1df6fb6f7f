"""Skills at run time: what the model is told, `load_skill` on the stream and in history, recovery, dynamic skills."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.engine.recovery import ABANDONED_TEXT, recover_steps
from eve_runtime.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage
from eve_runtime.models import FunctionModel
from tests.engine.test_recovery import LEDGER_TOOLS, Script, settle
from tests.engine.test_turn_inputs import Recording
from tests.harness import Event, Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio

TRIP = "# Plan a trip\n\nAsk where and when, then call get_weather for the destination.\n"
RESEARCH = "Read references/checklist.md first.\n"
SKILLS = {
    "agent/skills/plan_a_trip.md": f"---\ndescription: Plan a trip step by step.\n---\n{TRIP}",
    "agent/skills/research/SKILL.md": f"---\ndescription: Research before answering.\nlicense: MIT\n---\n{RESEARCH}",
    "agent/skills/research/references/checklist.md": "- Find primary sources.\n",
    "agent/skills/research/scripts/fetch.sh": "echo fetch\n",
    "agent/tools/read_skill_file.py": '''
from eve_runtime import ToolContext

def read_skill_file(skill: str, path: str, ctx: ToolContext) -> str:
    """Read a file of one of the agent's skills."""
    return ctx.get_skill(skill).file(path).text()
''',
}
RESEARCH_LOADED = (
    "Read references/checklist.md first.\n\n"
    "This skill's files, relative to its folder $HOME/.agents/skills/research/ in the sandbox:\n"
    "- references/checklist.md\n"
    "- scripts/fetch.sh\n"
)
SKILLS_BLOCK = (
    "Available skills. When a request matches a skill's description, or someone asks for a skill, call "
    "load_skill with its name first: its instructions are added to this turn.\n"
    "- plan_a_trip: Plan a trip step by step.\n"
    "- research: Research before answering."
)


def load(skill: Any) -> str:
    return f"/call load_skill {json.dumps({'skill': skill})}"


def at(step: int = 0) -> dict[str, Any]:
    return {"sequence": 0, "stepIndex": step, "turnId": "turn_0"}


def data(events: list[Event], event_type: str) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(events, event_type)]


async def one_turn(h: Harness, message: str) -> list[Event]:
    sid = await h.create(message)
    events = await h.turns(sid, 1)
    await h.stop()
    return events


@pytest.fixture
async def model() -> Recording:
    return Recording()


@pytest.fixture
async def h(tmp_path: Path, model: Recording) -> Harness:
    return await make_harness(tmp_path, SKILLS, models={"test": model})


# --- what the model is told ---------------------------------------------------------------------


async def test_the_model_sees_each_skill_and_the_load_skill_tool(h: Harness, model: Recording) -> None:
    await one_turn(h, "hello")
    request = model.requests[0]
    systems = [m.content for m in request.messages if isinstance(m, SystemMessage)]
    assert systems == ["You are a test agent.\n", SKILLS_BLOCK]  # after the instructions, before the history
    offered = {t.name: t for t in request.tools}
    assert offered["load_skill"].input_schema == {
        "type": "object",
        "properties": {"skill": {"type": "string", "description": "The skill's name, from the Available skills list."}},
        "required": ["skill"],
        "additionalProperties": False,
    }
    assert "Available skills" in offered["load_skill"].description


async def test_each_call_gets_its_own_skills_block(h: Harness, model: Recording) -> None:
    # The offline models' token count memoizes a conversation from its first message that outlives a
    # call (`models/token_count.py`): a block shared by every session's calls would be that message,
    # and two sessions taking turns would recount their whole histories on every call.
    for message in ("hello", "again"):
        await h.turns(await h.create(message), 1)
    await h.stop()
    blocks = [[m for m in request.messages if m.content == SKILLS_BLOCK] for request in model.requests]
    assert [len(found) for found in blocks] == [1, 1]
    assert blocks[0][0] is not blocks[1][0]


async def test_an_agent_without_skills_gets_neither(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, models={"test": model})
    events = await one_turn(h, load("plan_a_trip"))
    request = model.requests[0]
    assert "load_skill" not in {t.name for t in request.tools}
    assert [m.content for m in request.messages if isinstance(m, SystemMessage)] == ["You are a test agent.\n"]
    [result] = data(events, "action.result")  # just an unknown tool
    assert result["result"]["kind"] == "tool-result" and result["error"]["code"] == "UNKNOWN_TOOL"


# --- a load on the stream and in history --------------------------------------------------------


async def test_load_skill_emits_a_load_skill_action_and_result(h: Harness, model: Recording) -> None:
    events = await one_turn(h, load("plan_a_trip"))
    assert [t for t in types(events) if t != "message.appended"] == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "actions.requested",
        "action.result",
        "step.completed",
        "step.started",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    assert "action.input.appended" not in types(events)  # a skill load's input is never streamed
    assert data(events, "actions.requested") == [
        {
            "actions": [
                {"callId": "call_0_0", "input": {"skill": "plan_a_trip"}, "kind": "load-skill", "name": "plan_a_trip"}
            ],
            **at(0),
        }
    ]
    assert data(events, "action.result") == [
        {
            "result": {"callId": "call_0_0", "kind": "load-skill-result", "name": "plan_a_trip", "output": TRIP},
            "status": "completed",
            **at(0),
        }
    ]
    # the body joins the turn as the call's result: the model reads it on the next step
    answered = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.name, m.content, m.is_error) for m in answered] == [
        ("call_0_0", "load_skill", TRIP, False)
    ]
    assert last_reply(events) == f"load_skill -> {json.dumps(TRIP)}"


async def test_a_loaded_skill_stays_in_the_history_of_later_turns(h: Harness, model: Recording) -> None:
    sid = await h.create(load("plan_a_trip"))
    await h.turns(sid, 1)
    await h.send(sid, "and now?")
    await h.turns(sid, 2)
    await h.stop()
    later = [m.content for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    assert later == [TRIP]


async def test_loading_a_package_lists_its_files_and_a_tool_reads_one(h: Harness, model: Recording) -> None:
    message = f'{load("research")}\n/call read_skill_file {{"skill": "research", "path": "references/checklist.md"}}'
    events = await one_turn(h, message)
    results = data(events, "action.result")
    assert results[0]["result"] == {
        "callId": "call_0_0",
        "kind": "load-skill-result",
        "name": "research",
        "output": RESEARCH_LOADED,
    }
    assert results[1]["result"]["output"] == "- Find primary sources.\n"
    assert results[1]["result"]["kind"] == "tool-result"
    answered = {m.name: m.content for m in model.requests[1].messages if isinstance(m, ToolMessage)}
    assert answered == {"load_skill": RESEARCH_LOADED, "read_skill_file": "- Find primary sources.\n"}


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        ("references/missing.md", "ACTION_RESULT_FAILED", "The skill 'research' has no file 'references/missing.md'."),
        ("../plan_a_trip.md", "ACTION_RESULT_FAILED", "is not a relative path inside the skill"),
    ],
)
async def test_ctx_get_skill_failures_fail_the_call(h: Harness, path: str, code: str, message: str) -> None:
    call = json.dumps({"skill": "research", "path": path})
    [result] = data(await one_turn(h, f"/call read_skill_file {call}"), "action.result")
    assert result["status"] == "failed" and result["error"]["code"] == code
    assert message in result["error"]["message"]


async def test_ctx_get_skill_of_an_unknown_skill_fails_the_call(h: Harness) -> None:
    call = json.dumps({"skill": "nope", "path": "SKILL.md"})
    [result] = data(await one_turn(h, f"/call read_skill_file {call}"), "action.result")
    assert result["error"]["message"] == "ctx.get_skill: the agent has no skill named 'nope'"


async def test_an_unknown_skill_fails_the_load_with_the_skills_there_are(h: Harness, model: Recording) -> None:
    events = await one_turn(h, load("nope"))
    message = 'No skill named "nope". Available skills: plan_a_trip, research.'
    assert data(events, "action.result") == [
        {
            "error": {"code": "SKILL_NOT_FOUND", "message": message},
            "result": {
                "callId": "call_0_0",
                "isError": True,
                "kind": "load-skill-result",
                "name": "nope",
                "output": message,
            },
            "status": "failed",
            **at(0),
        }
    ]
    answered = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert [(m.content, m.is_error) for m in answered] == [(f"Error: {message}", True)]
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]  # the turn goes on


@pytest.mark.parametrize("arguments", [{}, {"name": "plan_a_trip"}, {"skill": 3}, {"skill": "research", "x": 1}])
async def test_a_load_without_a_skill_name_fails_and_names_no_skill(h: Harness, arguments: dict[str, Any]) -> None:
    events = await one_turn(h, f"/call load_skill {json.dumps(arguments)}")
    [requested] = data(events, "actions.requested")[0]["actions"]
    assert requested["kind"] == "load-skill" and requested["input"] == arguments
    assert ("name" in requested) == isinstance(arguments.get("skill"), str)
    [result] = data(events, "action.result")
    assert result["status"] == "failed" and result["error"]["code"] == "INVALID_TOOL_INPUT"
    assert result["result"]["kind"] == "load-skill-result"


async def test_skill_loads_run_beside_other_calls(h: Harness) -> None:
    message = f'{load("plan_a_trip")}\n/call get_weather {{"city": "Oslo"}}\n{load("research")}'
    events = await one_turn(h, message)
    kinds = [a["kind"] for d in data(events, "actions.requested") for a in d["actions"]]
    assert kinds == ["load-skill", "tool-call", "load-skill"]
    results = {r["result"]["callId"]: r["result"] for r in data(events, "action.result")}
    assert (results["call_0_0"]["name"], results["call_0_2"]["name"]) == ("plan_a_trip", "research")
    assert results["call_0_1"]["toolName"] == "get_weather"
    assert {d["callId"] for d in data(events, "action.input.appended")} == {"call_0_1"}  # the weather's only


async def test_a_tool_file_named_load_skill_replaces_the_loader(tmp_path: Path) -> None:
    files = {
        **SKILLS,
        "agent/tools/load_skill.py": '''
def load_skill(skill: str) -> str:
    """My own loader."""
    return f"mine: {skill}"
''',
    }
    h = await make_harness(tmp_path, files)
    events = await one_turn(h, load("plan_a_trip"))
    [action] = data(events, "actions.requested")[0]["actions"]
    assert action["kind"] == "tool-call" and action["toolName"] == "load_skill"
    assert data(events, "action.result")[0]["result"]["output"] == "mine: plan_a_trip"


# --- recovery -----------------------------------------------------------------------------------


async def test_a_recorded_load_is_recovered_after_a_crash(tmp_path: Path) -> None:
    plan = [
        [
            ToolCall(id="s", name="load_skill", arguments={"skill": "plan_a_trip"}),
            ToolCall(id="b", name="slow", arguments={"label": "b"}),
        ],
        "done",
    ]
    script = Script(plan)
    files = {**SKILLS, **LEDGER_TOOLS}
    h = await make_harness(tmp_path, files, models={"test": FunctionModel(stream_function=script.stream)})
    sid = await h.create("go")
    await settle(h, sid, lambda ev: len(of_type(ev, "action.result")) == 1)
    await h.restart()
    events = await h.turns(sid, 1)
    await h.stop()
    recovered = {m.tool_call_id: m.content for m in script.requests[-1] if isinstance(m, ToolMessage)}
    assert recovered == {"s": TRIP, "b": ABANDONED_TEXT}
    results = data(events, "action.result")
    assert [r["result"]["kind"] for r in results] == ["load-skill-result", "tool-result"]  # not loaded again
    assert results[1]["result"]["callId"] == "b" and results[1]["error"]["code"] == "ACTION_ABANDONED"  # b is closed
    assert last_reply(events) == "done"


async def test_an_unrecorded_load_is_answered_again_from_the_skills(h: Harness) -> None:
    await h.stop()
    agent = h.app.root
    assert agent is not None
    requested: Event = {
        "type": "actions.requested",
        "data": {
            "actions": [{"callId": "s", "input": {"skill": "research"}, "kind": "load-skill", "name": "research"}],
            **at(0),
        },
    }
    recovered = recover_steps(agent, "turn_0", [requested], 0)
    [assistant, answer] = recovered.history
    assert isinstance(assistant, AssistantMessage)
    assert [(c.id, c.name) for c in assistant.tool_calls] == [("s", "load_skill")]  # the tool, not the skill's name
    assert isinstance(answer, ToolMessage) and (answer.content, answer.is_error) == (RESEARCH_LOADED, False)
    assert recovered.next_step == 0 and recovered.interrupted
    [closing] = recovered.closings  # the load's one closing event, written on recovery
    assert closing.load_skill and closing.outcome.output == RESEARCH_LOADED


# --- dynamic skills -----------------------------------------------------------------------------

DYNAMIC_SKILLS = {
    "agent/skills/playbook.py": """
from eve_runtime import define_dynamic, define_skill
from tests.hook_ledger import LEDGER

def on_session(ctx):
    LEDGER.append("session")
    return define_skill(
        description=f"The playbook of {ctx.session.principal_id}.",
        markdown="Follow the playbook.",
        files={"references/steps.md": "1. Breathe."},
    )

playbook = define_dynamic({"session.started": on_session})
""",
    "agent/skills/per_turn.py": """
from eve_runtime import define_dynamic, define_skill
from tests.hook_ledger import LEDGER

def on_turn(ctx):
    LEDGER.append("turn " + ctx.session.turn_id)
    if ctx.session.turn_id == "turn_1":
        return None
    return {
        "turn_note": define_skill(description=f"Notes for {ctx.session.turn_id}.", markdown="Note it."),
        "plan_a_trip": define_skill(description="Plan a trip, dynamically.", markdown="Dynamic trip."),
    }

per_turn = define_dynamic({"turn.started": on_turn})
""",
}


@pytest.fixture
def ledger() -> Any:
    from tests import hook_ledger

    hook_ledger.LEDGER.clear()
    yield hook_ledger.LEDGER
    hook_ledger.LEDGER.clear()


def skills_listed(model: Recording, index: int) -> list[str]:
    block = [m.content for m in model.requests[index].messages if isinstance(m, SystemMessage)][-1]
    return block.splitlines()[1:]


async def test_dynamic_skills_are_listed_loaded_and_resolved_again(tmp_path: Path, ledger: list[Any]) -> None:
    model = Recording()
    h = await make_harness(tmp_path, {**SKILLS, **DYNAMIC_SKILLS}, models={"test": model})
    sid = await h.create(f"{load('playbook')}\n{load('plan_a_trip')}")
    events = await h.turns(sid, 1)
    assert skills_listed(model, 0) == [
        "- plan_a_trip: Plan a trip, dynamically.",  # a dynamic skill overrides the static one
        "- playbook: The playbook of token.",
        "- research: Research before answering.",
        "- turn_note: Notes for turn_0.",
    ]
    outputs = [r["result"]["output"] for r in data(events, "action.result")]
    assert outputs == [
        "Follow the playbook.\n\n"
        "This skill's files, relative to its folder $HOME/.agents/skills/playbook/ in the sandbox:\n"
        "- references/steps.md\n",
        "Dynamic trip.",
    ]
    await h.restart()  # a new process resolves the session's skills again; the turn's resolve per turn
    await h.send(
        sid, f'{load("turn_note")}\n/call read_skill_file {{"skill": "playbook", "path": "references/steps.md"}}'
    )
    events = await h.turns(sid, 2)
    await h.stop()
    assert skills_listed(model, -1) == [
        "- plan_a_trip: Plan a trip step by step.",  # turn_1's resolver returned nothing: the static one is back
        "- playbook: The playbook of token.",
        "- research: Research before answering.",
    ]
    second = data(events, "action.result")[-2:]
    assert second[0]["error"]["message"] == (
        'No skill named "turn_note". Available skills: plan_a_trip, playbook, research.'
    )
    assert second[1]["result"]["output"] == "1. Breathe."
    assert ledger == ["session", "turn turn_0", "session", "turn turn_1"]


async def test_dynamic_skills_alone_offer_load_skill_only_while_there_is_one(tmp_path: Path) -> None:
    files = {
        "agent/skills/maybe.py": """
from eve_runtime import define_dynamic, define_skill

def on_turn(ctx):
    if ctx.session.turn_id == "turn_0":
        return None
    return define_skill(description="Maybe.", markdown="Now there is one.")

maybe = define_dynamic({"turn.started": on_turn})
""",
    }
    model = Recording()
    h = await make_harness(tmp_path, files, models={"test": model})
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await h.send(sid, load("maybe"))
    events = await h.turns(sid, 2)
    await h.stop()
    assert "load_skill" not in {t.name for t in model.requests[0].tools}
    assert "load_skill" in {t.name for t in model.requests[1].tools}
    assert data(events, "action.result")[-1]["result"]["output"] == "Now there is one."


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("42", "The dynamic skill 'junk' is int"),
        ("{'bad name': define_skill(description='d', markdown='m')}", "The dynamic skill name 'bad name' is invalid"),
        ("define_skill(description='', markdown='m')", "'description' must be a non-empty string"),
    ],
)
async def test_a_dynamic_skill_resolver_returning_junk_fails_the_turn(
    tmp_path: Path, returned: str, message: str
) -> None:
    files = {
        "agent/skills/junk.py": (
            "from eve_runtime import define_dynamic, define_skill\n\n"
            f"junk = define_dynamic({{'turn.started': lambda ctx: {returned}}})\n"
        )
    }
    h = await make_harness(tmp_path, files)
    events = await one_turn(h, "hello")
    [failed] = data(events, "turn.failed")
    assert failed["code"] == "DYNAMIC_RESOLVER_FAILED" and message in failed["message"]


# --- one agent's skills -------------------------------------------------------------------------

HELPER = {
    "agent/subagents/helper/agent.py": (
        "from eve_runtime import define_agent\n\n"
        'agent = define_agent(model="test", description="A helper that answers questions.")\n'
    ),
    "agent/subagents/helper/instructions.md": "You help.\n",
}


def helper_requests(model: Recording) -> list[Any]:
    return [r for r in model.requests if any(m.content == "You help.\n" for m in r.messages)]


async def test_a_subagent_does_not_see_its_parents_skills(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, {**SKILLS, **HELPER}, models={"test": model})
    sid = await h.create(f"/call helper {json.dumps({'message': load('plan_a_trip')})}")
    events = await h.turns(sid, 1)
    child = data(events, "agent.started")[0]["sessionId"]
    child_events = await h.turns(child, 1)
    await h.stop()
    [request, *_] = helper_requests(model)
    assert "load_skill" not in {t.name for t in request.tools}
    assert [m.content for m in request.messages if isinstance(m, SystemMessage)] == ["You help.\n"]
    [action] = data(child_events, "actions.requested")[0]["actions"]
    assert action["kind"] == "tool-call"  # no skills here: load_skill is just a tool the child lacks
    [result] = data(child_events, "action.result")
    assert result["error"]["code"] == "UNKNOWN_TOOL"


async def test_a_subagent_loads_its_own_skills_only(tmp_path: Path) -> None:
    files = {**SKILLS, **HELPER, "agent/subagents/helper/skills/helping.md": "Help kindly.\n"}
    model = Recording()
    h = await make_harness(tmp_path, files, models={"test": model})
    message = f"{load('helping')}\n{load('plan_a_trip')}"
    sid = await h.create(f"/call helper {json.dumps({'message': message})}")
    events = await h.turns(sid, 1)
    child = data(events, "agent.started")[0]["sessionId"]
    child_events = await h.turns(child, 1)
    await h.stop()
    assert skills_listed(model, model.requests.index(helper_requests(model)[0])) == ["- helping: Help kindly."]
    assert all("helping" not in line for line in skills_listed(model, 0))  # nor the parent the subagent's
    results = [r["result"] for r in data(child_events, "action.result")]
    assert results[0] == {
        "callId": "call_0_0",
        "kind": "load-skill-result",
        "name": "helping",
        "output": "Help kindly.\n",
    }
    assert results[1]["output"] == 'No skill named "plan_a_trip". Available skills: helping.'
