"""Dynamic context: user-role dynamic instructions in history, `ctx.session`, and `ctx.memo`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.checkpoint import SessionState
from tests import hook_ledger
from tests.engine.test_turn_inputs import Recording, contents
from tests.harness import make_harness, of_type

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def ledger() -> Iterator[list[Any]]:
    hook_ledger.LEDGER.clear()
    yield hook_ledger.LEDGER
    hook_ledger.LEDGER.clear()


USER_ROLE = {
    "agent/instructions/brief.py": """
from eve_runtime import define_dynamic, define_instructions

async def on_session(ctx):
    return define_instructions(f"Brief for {ctx.session.id[:5]}.", role="user")

def on_turn(ctx):
    return define_instructions(f"Turn note {ctx.session.turn_id}.", role="user")

brief = define_dynamic({"session.started": on_session, "turn.started": on_turn})
""",
}


async def test_user_role_dynamic_instructions_enter_history_once_before_the_message(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, USER_ROLE, models={"test": model})
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await h.send(sid, "again")
    await h.turns(sid, 2)
    await h.stop()
    first, second = (contents(list(r.messages)) for r in model.requests)
    assert first == [
        ("system", "You are a test agent.\n"),
        ("user", "Brief for wrun_."),
        ("user", "Turn note turn_0."),
        ("user", "hello"),
    ]
    assert second[1:] == [
        ("user", "Brief for wrun_."),
        ("user", "Turn note turn_0."),
        ("user", "hello"),
        ("user", "Turn note turn_1."),
        ("user", "again"),
    ]  # never as system messages, never repeated


STEADY = {
    "agent/instructions/plan.py": """
from eve_runtime import define_dynamic, define_instructions

def on_turn(ctx):
    tier = "gold" if ctx.session.sequence >= 2 else "free"
    return define_instructions(f"The user is on the {tier} plan.", role="user")

plan = define_dynamic({"turn.started": on_turn})
""",
}


async def test_a_user_role_dynamic_instruction_is_added_again_only_when_its_content_changed(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, STEADY, models={"test": model})
    sid = await h.create("one")
    await h.turns(sid, 1)
    for n, text in enumerate(["two", "three"], start=2):
        await h.send(sid, text)
        await h.turns(sid, n)
    await h.stop()
    assert contents(list(model.requests[-1].messages))[1:] == [
        ("user", "The user is on the free plan."),
        ("user", "one"),
        ("user", "two"),  # the same content at turn 1: not added again
        ("user", "The user is on the gold plan."),  # changed at turn 2: added before its message
        ("user", "three"),
    ]


MEMO = {
    "agent/instructions/memo.py": """
from eve_runtime import define_dynamic, define_instructions
from tests.hook_ledger import LEDGER

async def compute():
    LEDGER.append("computed")
    return {"n": len(LEDGER)}

async def on_turn(ctx):
    value = await ctx.memo("profile", compute)
    return define_instructions(f"Profile {value['n']}.")

memo = define_dynamic({"turn.started": on_turn})
""",
}


async def test_memo_is_computed_once_per_session_and_survives_a_reload_from_the_store(
    tmp_path: Path, ledger: list[Any]
) -> None:
    model = Recording()
    h = await make_harness(tmp_path, MEMO, models={"test": model})
    sid = await h.create("one")
    await h.turns(sid, 1)
    await h.send(sid, "two")
    await h.turns(sid, 2)
    assert ledger == ["computed"]
    state = SessionState.model_validate_json(await h.store.load_checkpoint(sid) or "")
    assert state.memo == {"profile": {"n": 1}}  # durable with the session's checkpoint
    await h.restart()  # a new process: the session is read back from the store
    await h.send(sid, "three")
    await h.turns(sid, 3)
    other = await h.create("elsewhere")
    await h.turns(other, 1)
    await h.stop()
    assert ledger == ["computed", "computed"]  # once for each session, not again after the restart
    assert [("system", "Profile 1.") in contents(list(r.messages)) for r in model.requests] == [True] * 3 + [False]
    assert ("system", "Profile 2.") in contents(list(model.requests[3].messages))


FAILING_MEMO = {
    "agent/instructions/memo.py": """
from eve_runtime import define_dynamic
from tests.hook_ledger import LEDGER

def compute():
    LEDGER.append("tried")
    if len(LEDGER) == 1:
        raise RuntimeError("backend down")
    return "ok"

async def on_session(ctx):
    return await ctx.memo("k", compute)

memo = define_dynamic(on_session)
""",
}


async def test_a_memo_that_raises_fails_the_turn_and_is_tried_again(tmp_path: Path, ledger: list[Any]) -> None:
    h = await make_harness(tmp_path, FAILING_MEMO)
    sid = await h.create("one")
    events = await h.turns(sid, 1)
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "DYNAMIC_RESOLVER_FAILED" and "backend down" in failed["message"]
    await h.send(sid, "two")
    events = await h.turns(sid, 2)
    await h.stop()
    # a bare function is a session.started resolver; after a failure it runs again with the next turn
    assert ledger == ["tried", "tried"]
    assert of_type(events, "turn.completed") != []


async def test_memo_results_must_be_json(tmp_path: Path) -> None:
    files = {
        "agent/instructions/memo.py": (
            "from eve_runtime import define_dynamic\n\n"
            "async def on_turn(ctx):\n"
            "    await ctx.memo('k', lambda: object())\n\n"
            "memo = define_dynamic({'turn.started': on_turn})\n"
        )
    }
    h = await make_harness(tmp_path, files)
    sid = await h.create("one")
    events = await h.turns(sid, 1)
    await h.stop()
    assert "must be JSON data" in of_type(events, "turn.failed")[0]["data"]["message"]


DYNAMIC_TOOLS = {
    "agent/tools/warehouse.py": '''
from eve_runtime import define_dynamic
from tests.hook_ledger import LEDGER

def make(table):
    def query(sql: str) -> str:
        """Query one table of the warehouse."""
        return f"{table}: {sql}"
    return query

def on_session(ctx):
    LEDGER.append("session")
    return {"orders": make("orders"), "users": make("users")}

warehouse = define_dynamic({"session.started": on_session})
''',
    "agent/tools/get_weather.py": '''
from eve_runtime import define_dynamic
from tests.hook_ledger import LEDGER

def on_turn(ctx):
    LEDGER.append("turn " + ctx.turn_id)

    def get_weather(city: str) -> str:
        """The weather, per turn."""
        return f"rain in {city} ({ctx.turn_id})"

    return get_weather

get_weather = define_dynamic({"turn.started": on_turn})
''',
}


async def test_dynamic_tools_are_offered_and_run_and_come_back_after_a_restart(
    tmp_path: Path, ledger: list[Any]
) -> None:
    model = Recording()
    h = await make_harness(tmp_path, DYNAMIC_TOOLS, models={"test": model})
    sid = await h.create('/call orders {"sql": "select 1"}\n/call get_weather {"city": "Oslo"}')
    events = await h.turns(sid, 1)
    offered = sorted(t.name for t in model.requests[0].tools)
    assert {"orders", "users", "get_weather"} <= set(offered)
    results = {e["data"]["result"]["toolName"]: e["data"]["result"]["output"] for e in of_type(events, "action.result")}
    assert results == {"orders": "orders: select 1", "get_weather": "rain in Oslo (turn_0)"}
    await h.restart()
    await h.send(sid, '/call users {"sql": "select 2"}')
    events = await h.turns(sid, 2)
    await h.stop()
    assert of_type(events, "action.result")[-1]["data"]["result"]["output"] == "users: select 2"
    # session resolvers run again when a new process takes the session up; turn resolvers each turn
    assert ledger == ["session", "turn turn_0", "session", "turn turn_1"]


async def test_a_dynamic_tool_resolver_returning_junk_fails_the_turn(tmp_path: Path) -> None:
    files = {
        "agent/tools/junk.py": (
            "from eve_runtime import define_dynamic\n\njunk = define_dynamic({'turn.started': lambda ctx: 42})\n"
        )
    }
    h = await make_harness(tmp_path, files)
    sid = await h.create("hello")
    events = await h.turns(sid, 1)
    await h.stop()
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "DYNAMIC_RESOLVER_FAILED" and "not a tool function" in failed["message"]


APPROVED = {
    "agent/tools/deploy.py": '''
from eve_runtime import define_dynamic, tool

def on_session(ctx):
    @tool(needs_approval=True)
    def deploy(service: str) -> str:
        """Deploy a service."""
        return f"deployed {service}"

    return deploy

deploy = define_dynamic({"session.started": on_session})
''',
}


async def test_a_parked_dynamic_tool_call_runs_after_a_restart(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, APPROVED)
    sid = await h.create('/call deploy {"service": "api"}')
    events = await h.wait_for(sid, lambda ev: bool(of_type(ev, "turn.waiting")))
    request = of_type(events, "input.requested")[0]["data"]["requests"][0]["requestId"]
    await h.restart()  # the new process resolves the session's tools again for the parked turn
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request, "optionId": "approve"}]})
    events = await h.turns(sid, 1)
    await h.stop()
    assert of_type(events, "action.result")[-1]["data"]["result"]["output"] == "deployed api"
