"""Sandboxes and sessions: one workspace per session, kept across restarts and clears, gone with a reset;
a subagent has its own, the built-in `agent` copy and `define_parent_sandbox()` share the parent's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Harness, StoreKind, make_harness, of_type

pytestmark = pytest.mark.anyio

HELPER = {
    "agent/subagents/helper/agent.py": (
        "from eve_runtime import define_agent\n\nagent = define_agent(model='test', description='Helps.')\n"
    ),
    "agent/subagents/helper/instructions.md": "You help.\n",
}
SHARING_HELPER = {
    **HELPER,
    "agent/subagents/helper/sandbox.py": (
        "from eve_runtime import define_parent_sandbox\n\nsandbox = define_parent_sandbox()\n"
    ),
}


@pytest.fixture(autouse=True)
def _on_each_store(harness_store: StoreKind) -> StoreKind:
    return harness_store


def call(name: str, **arguments: Any) -> str:
    return f"/call {name} {json.dumps(arguments)}"


def sandboxes(h: Harness) -> Path:
    return h.app.paths.app_root / ".eve" / "sandboxes"


def workspace(h: Harness, session_id: str) -> Path:
    return sandboxes(h) / session_id / "workspace"


def outputs(events: list[dict[str, Any]]) -> list[Any]:
    return [e["data"]["result"]["output"] for e in of_type(events, "action.result")]


async def test_each_session_has_its_own_workspace_kept_across_a_restart(tmp_path: Path) -> None:
    h = await make_harness(tmp_path)
    try:
        first = await h.create(call("bash", command="echo one > note.txt"))
        second = await h.create(call("bash", command="cat note.txt || echo none"))
        await h.turns(first, 1, timeout=20)
        events = await h.turns(second, 1, timeout=20)
        assert outputs(events)[-1]["stdout"] == "none\n"
        assert (workspace(h, first) / "note.txt").read_text() == "one\n"
        await h.restart()
        await h.send(first, call("bash", command="cat note.txt"))
        events = await h.turns(first, 2, timeout=20)
        assert outputs(events)[-1]["stdout"] == "one\n"
    finally:
        await h.stop()


async def test_clear_keeps_the_workspace_and_reset_removes_it(tmp_path: Path) -> None:
    h = await make_harness(tmp_path)
    try:
        sid = await h.create(call("write_file", filePath="kept.txt", content="kept"))
        await h.turns(sid, 1, timeout=20)
        await h.rt.control(sid, "clear")
        await h.wait_for(sid, lambda events: bool(of_type(events, "context.cleared")))
        assert (workspace(h, sid) / "kept.txt").read_text() == "kept"
        assert await h.rt.reset(sid)
        assert not (sandboxes(h) / sid).exists()
    finally:
        await h.stop()


async def test_a_subagent_has_its_own_sandbox(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, HELPER)
    try:
        sid = await h.create(call("helper", message=call("bash", command="pwd; echo child > child.txt")))
        await h.turns(sid, 1, timeout=20)
        owners = sorted(p.name for p in sandboxes(h).iterdir())
        assert sid not in owners and len(owners) == 1  # the child's, never the parent's
        assert (sandboxes(h) / owners[0] / "workspace" / "child.txt").read_text() == "child\n"
    finally:
        await h.stop()


@pytest.mark.parametrize(
    ("files", "tool"), [({}, "agent"), (SHARING_HELPER, "helper")], ids=["built-in agent", "define_parent_sandbox"]
)
async def test_the_agent_copy_and_a_parent_sandbox_share_the_parents(
    tmp_path: Path, files: dict[str, str], tool: str
) -> None:
    h = await make_harness(tmp_path, files)
    try:
        sid = await h.create(call("write_file", filePath="parent.txt", content="from the parent"))
        await h.turns(sid, 1, timeout=20)
        await h.send(sid, call(tool, message=call("bash", command="cat parent.txt; echo child > child.txt")))
        await h.turns(sid, 2, timeout=20)
        assert sorted(p.name for p in sandboxes(h).iterdir()) == [sid]
        assert (workspace(h, sid) / "child.txt").read_text() == "child\n"
    finally:
        await h.stop()
