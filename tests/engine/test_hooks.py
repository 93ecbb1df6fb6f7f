"""Hooks (`agent/hooks/**`): order, isolation, once per event, and their place before resolvers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.models import FunctionModel
from eve_runtime.store.base import StoreError
from tests import hook_ledger
from tests.engine.test_recovery import Script, settle
from tests.harness import fast_options, make_harness, of_type

pytestmark = pytest.mark.anyio

ORDERED = {
    "agent/hooks/a.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

async def typed(event, ctx):
    LEDGER.append(("a", event["type"], event["meta"]["id"], ctx.session.id))

def every(event, ctx):
    LEDGER.append(("a*", event["type"], event["meta"]["id"], ctx.session.id))

hook = define_hook({"turn.started": typed, "message.completed": typed, "*": every})
""",
    "agent/hooks/b.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

def typed(event, ctx):
    LEDGER.append(("b", event["type"], event["meta"]["id"], ctx.session.id))

async def every(event, ctx):
    LEDGER.append(("b*", event["type"], event["meta"]["id"], ctx.session.id))

hook = define_hook({"turn.started": typed, "*": every})
""",
}


@pytest.fixture(autouse=True)
def ledger() -> Iterator[list[Any]]:
    hook_ledger.LEDGER.clear()
    yield hook_ledger.LEDGER
    hook_ledger.LEDGER.clear()


async def test_hooks_run_once_per_event_in_stream_order_typed_before_wildcard(
    tmp_path: Path, ledger: list[Any]
) -> None:
    h = await make_harness(tmp_path, ORDERED)
    sid = await h.create("hello")
    events = await h.turns(sid, 1)
    await h.rt.hooks.settle(sid)
    await h.stop()
    expected: list[tuple[str, str, str, str]] = []
    for event in events:
        typed = {"turn.started": ["a", "b"], "message.completed": ["a"]}.get(event["type"], [])
        expected += [(who, event["type"], event["meta"]["id"], sid) for who in [*typed, "a*", "b*"]]
    assert ledger == expected


FAILING = {
    "agent/hooks/boom.py": """
from eve_runtime import define_hook

def sync_boom(event, ctx):
    raise RuntimeError("sync hook exploded")

async def async_boom(event, ctx):
    raise ValueError("async hook exploded")

hook = define_hook({"turn.started": sync_boom, "message.received": async_boom})
""",
    "agent/hooks/counter.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

hook = define_hook({"*": lambda event, ctx: LEDGER.append(event["type"])})
""",
}


async def test_a_hook_that_raises_is_logged_and_the_turn_goes_on(
    tmp_path: Path, ledger: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="eve.hooks")
    h = await make_harness(tmp_path, FAILING)
    sid = await h.create("hello")
    events = await h.turns(sid, 1)
    await h.rt.hooks.settle(sid)
    await h.stop()
    assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]
    assert of_type(events, "turn.failed") == []
    assert ledger == [e["type"] for e in events]  # the other hook saw every event
    assert "hook boom (turn.started) failed on turn.started" in caplog.text
    assert "sync hook exploded" in caplog.text and "async hook exploded" in caplog.text


SLOW = {
    "agent/hooks/slow.py": """
import asyncio
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

async def slow(event, ctx):
    await asyncio.sleep(0.15)
    LEDGER.append(event["type"])

async def stuck(event, ctx):
    await asyncio.sleep(60)

hook = define_hook({"*": slow, "session.started": stuck})
""",
}


async def test_a_slow_hook_never_stalls_the_stream_and_a_stuck_one_is_given_up(
    tmp_path: Path, ledger: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="eve.hooks")
    h = await make_harness(tmp_path, SLOW, options=fast_options(hook_timeout=0.3))
    sid = await h.create("hello")
    events = await h.turns(sid, 1, timeout=1.0)  # far less than the hooks need in total
    assert len(ledger) < len(events)
    await h.rt.hooks.settle(sid)
    await h.stop()
    assert ledger == [e["type"] for e in events]
    assert "took longer than 0.3 s on session.started" in caplog.text


CRASH = {
    "agent/hooks/audit.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

hook = define_hook({"*": lambda event, ctx: LEDGER.append(event["meta"]["id"])})
""",
}


async def test_a_hook_sees_each_event_once_across_a_crash_and_recovery(tmp_path: Path, ledger: list[Any]) -> None:
    script = Script(["hold"])
    h = await make_harness(tmp_path, CRASH, models={"test": FunctionModel(stream_function=script.stream)})
    sid = await h.create("hi")
    await settle(h, sid, lambda ev: any(e["type"] == "message.appended" for e in ev))
    await h.rt.hooks.settle(sid)
    before = await h.events(sid)
    assert ledger == [e["meta"]["id"] for e in before]
    await h.restart()  # the new process recovers the turn: it re-runs the step, reading the log
    script.gate.set()
    events = await h.turns(sid, 1)
    await h.rt.hooks.settle(sid)
    await h.stop()
    assert ledger == [e["meta"]["id"] for e in events]  # every event once: none again after the restart
    assert len(set(ledger)) == len(ledger)


BEFORE_RESOLVERS = {
    "agent/hooks/first.py": """
import asyncio
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

async def on_turn(event, ctx):
    await asyncio.sleep(0.05)
    LEDGER.append("hook " + event["type"])

hook = define_hook({"session.started": on_turn, "turn.started": on_turn})
""",
    "agent/instructions/later.py": """
from eve_runtime import define_dynamic
from tests.hook_ledger import LEDGER

def resolve(event):
    def handler(ctx):
        LEDGER.append("resolver " + event)
        return None
    return handler

later = define_dynamic({"session.started": resolve("session.started"), "turn.started": resolve("turn.started")})
""",
}


async def test_hooks_of_an_event_run_before_its_dynamic_resolvers(tmp_path: Path, ledger: list[Any]) -> None:
    h = await make_harness(tmp_path, BEFORE_RESOLVERS)
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await h.send(sid, "again")
    await h.turns(sid, 2)
    await h.stop()
    assert ledger == [
        "hook session.started",
        "hook turn.started",
        "resolver session.started",
        "resolver turn.started",
        "hook turn.started",
        "resolver turn.started",
    ]


async def test_an_agent_without_hooks_runs_no_dispatcher(tmp_path: Path) -> None:
    h = await make_harness(tmp_path)
    sid = await h.create("hello")
    await h.turns(sid, 1)
    await asyncio.sleep(0.01)
    assert h.rt.hooks._queues == {}
    await h.stop()


ISOLATED = {
    "agent/hooks/parent.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

hook = define_hook({"turn.completed": lambda event, ctx: LEDGER.append(("parent", ctx.session.id, ctx.agent_name))})
""",
    "agent/subagents/helper/agent.py": (
        "from eve_runtime import define_agent\n\n"
        'agent = define_agent(model="test", description="A helper that answers questions.")\n'
    ),
    "agent/subagents/helper/instructions.md": "You help.\n",
    "agent/subagents/helper/hooks/child.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

hook = define_hook({"turn.completed": lambda event, ctx: LEDGER.append(("child", ctx.session.id, ctx.node_id))})
""",
}


async def test_subagent_hooks_fire_only_in_the_subagent_and_parent_hooks_only_in_the_parent(
    tmp_path: Path, ledger: list[Any]
) -> None:
    h = await make_harness(tmp_path, ISOLATED)
    sid = await h.create('/call helper {"message": "/reply forty-two"}')
    events = await h.turns(sid, 1)
    child = of_type(events, "agent.started")[0]["data"]["sessionId"]
    await h.turns(child, 1)
    await h.rt.hooks.settle(child)
    await h.rt.hooks.settle(sid)
    await h.stop()
    assert sorted(ledger) == [("child", child, "subagents/helper"), ("parent", sid, "app")]


CHANNELLED = {
    **ORDERED,
    "agent/channels/web.py": """
from eve_runtime.authoring.channels import define_channel
from tests.hook_ledger import LEDGER


def seen(data, channel):
    LEDGER.append(("channel", channel.type))


channel = define_channel(events={"*": seen}, state={"n": 0})
""",
}


async def test_a_store_error_in_the_channel_step_still_runs_the_hooks(
    tmp_path: Path, ledger: list[Any], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = await make_harness(tmp_path, CHANNELLED)

    async def broken(*args: Any) -> Any:
        raise StoreError("the store is unreachable")

    assert h.rt.hooks.channels is not None
    monkeypatch.setattr(h.rt.hooks.channels.states, "update", broken)  # loading the channel state fails
    continued = await h.rt.addresses.continue_or_create("web:t-1", "message", {"message": "hello"})
    sid = continued.session.id
    events = await h.turns(sid, 1)
    await h.rt.hooks.settle(sid)
    await h.stop()
    assert [entry for entry in ledger if entry[0] == "a*"] == [("a*", e["type"], e["meta"]["id"], sid) for e in events]
    assert not [entry for entry in ledger if entry[0] == "channel"]
    assert "the store is unreachable" in caplog.text
