"""`define_state`: per-session values across turns, parallel calls and restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_runtime import StateError, define_state
from tests.harness import last_reply, make_harness, of_type

pytestmark = pytest.mark.anyio

STATE_TOOLS = {
    "agent/lib/__init__.py": "",
    "agent/lib/counters.py": """
from eve_runtime import define_state

visits = define_state("visits", lambda: 0)
""",
    "agent/tools/visit.py": '''
from ..lib.counters import visits

def visit() -> int:
    """Count a visit."""
    return visits.update(lambda n: n + 1)
''',
    "agent/tools/visit_async.py": '''
from ..lib.counters import visits

async def visit_async() -> int:
    """Count a visit, asynchronously."""
    return visits.update(lambda n: n + 1)
''',
    "agent/tools/bad_state.py": '''
from ..lib.counters import visits

def bad_state() -> str:
    """Store something that is not JSON."""
    visits.set(object())
    return "stored"
''',
}


async def test_values_persist_across_turns_calls_and_restarts(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, STATE_TOOLS)
    sid = await h.create("/call visit {}\n/call visit_async {}")
    events = await h.turns(sid, 1)
    outputs = sorted(r["data"]["result"]["output"] for r in of_type(events, "action.result"))
    assert outputs == [1, 2]
    await h.restart()
    await h.send(sid, "/call visit {}")
    events = await h.turns(sid, 2)
    assert last_reply(events) == "visit -> 3"
    other = await h.create("/call visit {}")
    assert last_reply(await h.turns(other, 1)) == "visit -> 1"  # every session has its own value
    await h.stop()


async def test_a_value_that_is_not_json_fails_the_call(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, STATE_TOOLS)
    sid = await h.create("/call bad_state {}")
    events = await h.turns(sid, 1)
    await h.stop()
    result = of_type(events, "action.result")[0]["data"]
    assert result["status"] == "failed" and result["error"]["name"] == "StateError"


def test_state_outside_a_session_is_an_error() -> None:
    handle = define_state("outside", lambda: 1)
    with pytest.raises(StateError, match="only available while eve runs a tool"):
        handle.get()


async def test_a_subagent_sees_the_initial_value(tmp_path: Path) -> None:
    files = {
        **STATE_TOOLS,
        "agent/subagents/helper/agent.py": (
            'from eve_runtime import define_agent\n\nagent = define_agent(model="test", description="Counts.")\n'
        ),
        "agent/subagents/helper/instructions.md": "You count.\n",
        "agent/subagents/helper/tools/peek.py": '''
from ....lib.counters import visits

def peek() -> int:
    """Read the count."""
    return visits.get()
''',
    }
    h = await make_harness(tmp_path, files)
    sid = await h.create('/call visit {}\n/call helper {"message": "/call peek {}"}')
    events = await h.turns(sid, 1)
    await h.stop()
    assert [r["data"]["result"]["output"] for r in of_type(events, "action.result")][0] == 1
    assert of_type(events, "task.settled")[0]["data"]["output"] == "peek -> 0"  # the child's own value
