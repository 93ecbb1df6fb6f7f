"""Deployment handoff inside one process: `eve dev` generations (see `eve_runtime.engine.handoff`).

An idle session moves to the newest build on its next delivery; a session with a running turn,
a pending prompt, queued messages or working tasks finishes that work on its build first.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.engine.handoff import hand_off
from eve_runtime.models import TestModel
from eve_runtime.models.base import ModelRequest
from eve_runtime.project.compiler import compile_app
from eve_runtime.serving.reloader import Reloader
from tests.engine.test_workflow_tools import Clock
from tests.harness import Event, Harness, fast_options, of_type, open_store, types
from tests.helpers import write_app, write_files

pytestmark = pytest.mark.anyio

VERSION_TOOL = '''
import asyncio
from pathlib import Path
from eve_runtime import tool

@tool(needs_approval={approval})
async def {name}() -> str:
    """Say which build runs."""
    while {gate!r} and not Path({gate!r}).exists():
        await asyncio.sleep(0.01)
    return "{label}"
'''


def build(label: str, *, agent: str = "", gate: Path | None = None) -> dict[str, str]:
    """The files of one build of the app: instructions and tools that name `label`.

    With `gate`, the `version` tool returns only once that file exists (a turn held open as long
    as the test needs, however slow the machine).
    """
    version = VERSION_TOOL.format(name="version", approval=False, label=label, gate=str(gate or ""))
    return {
        "agent/agent.py": agent or 'from eve_runtime import define_agent\n\nagent = define_agent(model="test")\n',
        "agent/instructions.md": f"You are build {label}.\n",
        "agent/tools/version.py": version,
        "agent/tools/dangerous.py": VERSION_TOOL.format(name="dangerous", approval=True, label=label, gate=""),
    }


class Recording(TestModel):
    """The test model, remembering every request."""

    def __init__(self) -> None:
        super().__init__("test")
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        return super().stream(request)

    def instructions(self, index: int = -1) -> str:
        return str(self.requests[index].messages[0].content)

    def tools(self, index: int = -1) -> set[str]:
        return {tool.name for tool in self.requests[index].tools}


class Builds:
    """One app in one process, rebuilt in place as `eve dev` does."""

    def __init__(self, h: Harness, reloader: Reloader, app: Path, model: Recording) -> None:
        self.h, self.reloader, self.app, self.model = h, reloader, app, model

    async def deploy(self, files: Mapping[str, str]) -> str:
        """Write a new build and load it; returns its deployment id."""
        write_files(self.app, files)
        assert (await self.reloader.rebuild()).ok
        return self.reloader.manifest.content_hash

    async def deployment(self, sid: str) -> str | None:
        record = await self.h.store.get_session(sid)
        assert record is not None
        return record.deployment


async def start(tmp_path: Path, files: Mapping[str, str], **options: Any) -> Builds:
    app = write_app(tmp_path, files)
    compiled = compile_app(app, write=False)
    assert compiled.root is not None, [d.message for d in compiled.diagnostics]
    store = await open_store(tmp_path)
    model = Recording()
    h = Harness(app=compiled, store=store, models={"test": model}, options=fast_options(**options))
    runtime = await h.start()
    return Builds(h, Reloader(app, runtime, compiled), app, model)


def outputs(events: list[Event]) -> list[Any]:
    return [e["data"]["result"]["output"] for e in of_type(events, "action.result")]


def parked(events: list[Event]) -> bool:
    return bool(events) and events[-1]["type"] == "turn.waiting"


async def test_an_idle_session_moves_on_its_next_delivery_and_sees_the_new_code(tmp_path: Path) -> None:
    b = await start(tmp_path, build("1"))
    first = b.reloader.manifest.content_hash
    sid = await b.h.create("/call version {}")
    await b.h.turns(sid, 1)
    assert await b.deployment(sid) == first
    second = await b.deploy(
        {**build("2"), "agent/tools/added.py": 'def added() -> str:\n    """New in build 2."""\n    return "added"\n'}
    )
    assert second != first
    assert await b.deployment(sid) == first  # nothing moves before a delivery
    await b.h.send(sid, "/call added {}")
    events = await b.h.turns(sid, 2)
    await b.h.stop()
    assert outputs(events) == ["1", "added"]
    assert b.model.instructions() == "You are build 2.\n" and "added" in b.model.tools()
    assert b.model.instructions(0) == "You are build 1.\n" and "added" not in b.model.tools(0)
    assert await b.deployment(sid) == second
    # the handoff itself shows nothing on the stream: the second turn is an ordinary turn
    second_turn = types(events)[types(events).index("session.waiting") + 1 :]
    assert second_turn[:2] == ["turn.started", "message.received"]
    assert not [t for t in types(events) if "handoff" in t or t == "session.started"][1:]


async def test_a_parked_approval_stays_on_its_code_until_answered(tmp_path: Path) -> None:
    b = await start(tmp_path, build("1"))
    first = b.reloader.manifest.content_hash
    sid = await b.h.create("/call dangerous {}")
    events = await b.h.wait_for(sid, parked)
    request_id = of_type(events, "input.requested")[-1]["data"]["requests"][0]["requestId"]
    second = await b.deploy(build("2"))
    await b.h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, "optionId": "approve"}]})
    events = await b.h.turns(sid, 1)
    assert outputs(events) == ["1"]  # the approved call ran the code that asked
    assert b.model.instructions() == "You are build 1.\n"  # and the turn finished on it
    assert await b.deployment(sid) == first
    await b.h.send(sid, "/call version {}")  # the next turn takes the new code
    events = await b.h.turns(sid, 2)
    await b.h.stop()
    assert outputs(events)[-1] == "2" and b.model.instructions() == "You are build 2.\n"
    assert await b.deployment(sid) == second


async def test_a_running_turn_finishes_on_its_code_and_deliveries_meanwhile_queue(tmp_path: Path) -> None:
    gate = tmp_path / "release-the-first-turn"
    b = await start(tmp_path, build("1", gate=gate))
    sid = await b.h.create("/call version {}")
    await b.h.wait_for(sid, lambda ev: "actions.requested" in types(ev))
    await b.deploy(build("2"))
    await b.h.send(sid, "/call version {}", turnPolicy="queue")
    await b.h.send(sid, "/call version {}", turnPolicy="queue")
    gate.touch()
    events = await b.h.turns(sid, 3)
    assert outputs(events) == ["1", "1", "1"]  # the session stayed on its code while work waited
    await b.h.send(sid, "/call version {}")
    events = await b.h.turns(sid, 4)
    await b.h.stop()
    assert outputs(events) == ["1", "1", "1", "2"]
    assert len(of_type(events, "message.received")) == 4  # nothing lost, nothing twice


async def test_working_tasks_keep_the_session_on_its_code_until_they_settle(tmp_path: Path) -> None:
    task_tool = '''
import asyncio
from eve_runtime import tool

@tool(task=True)
async def survey() -> str:
    """Work in the background."""
    await asyncio.sleep(0.4)
    return "survey {label}"
'''
    b = await start(tmp_path, {**build("1"), "agent/tools/survey.py": task_tool.format(label="1")})
    first = b.reloader.manifest.content_hash
    sid = await b.h.create("/call survey {}")
    await b.h.wait_for(sid, lambda ev: "task.started" in types(ev))
    await b.deploy({**build("2"), "agent/tools/survey.py": task_tool.format(label="2")})
    events = await b.h.turns(sid, 1)
    settled = of_type(events, "task.settled")
    assert settled and "survey 1" in json.dumps(settled[0]["data"])  # the task ran the code that started it
    assert b.model.instructions() == "You are build 1.\n"  # the turn it held open finished there too
    assert await b.deployment(sid) == first
    await b.h.send(sid, "/call version {}")
    events = await b.h.turns(sid, 2)
    await b.h.stop()
    assert outputs(events)[-1] == "2"


STATE_LIB = """
from eve_runtime import define_state

visits = define_state("visits", lambda: 0)
{extra}
"""

VISIT_TOOL = '''
from ..lib import counters

def visit() -> int:
    """Count a visit."""
    if hasattr(counters, "legacy"):
        counters.legacy.update(lambda n: n + 1)
    return counters.visits.update(lambda n: n + 1)
'''


async def test_a_handoff_drops_state_the_new_code_does_not_define(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def with_state(label: str, extra: str) -> dict[str, str]:
        return {
            **build(label),
            "agent/lib/__init__.py": "",
            "agent/lib/counters.py": STATE_LIB.format(extra=extra),
            "agent/tools/visit.py": VISIT_TOOL,
        }

    b = await start(tmp_path, with_state("1", 'legacy = define_state("legacy", lambda: 0)'))
    sid = await b.h.create("/call visit {}")
    await b.h.turns(sid, 1)
    state = json.loads(await b.h.store.load_checkpoint(sid) or "{}")
    assert state["values"] == {"visits": 1, "legacy": 1}
    await b.deploy(with_state("2", ""))
    with caplog.at_level(logging.WARNING, logger="eve.handoff"):
        await b.h.send(sid, "/call visit {}")
        events = await b.h.turns(sid, 2)
    await b.h.stop()
    assert outputs(events) == [1, 2]  # the kept value carried over
    state = json.loads(await b.h.store.load_checkpoint(sid) or "{}")
    assert state["values"] == {"visits": 2}
    assert any("dropped state 'legacy' on handoff" in r.getMessage() for r in caplog.records)


async def test_a_handoff_restarts_the_session_timeout_and_an_ordinary_message_does_not(tmp_path: Path) -> None:
    limited = (
        "from eve_runtime import define_agent\n\n"
        "agent = define_agent(model='test', limits={'session_timeout_ms': 60_000})\n"
    )
    clock = Clock()
    b = await start(tmp_path, build("1", agent=limited), clock=clock)
    sid = await b.h.create("hi")
    await b.h.turns(sid, 1)
    created = await b.h.store.get_session(sid)
    assert created is not None and created.deadline is not None
    clock.offset = 30.0
    await b.h.send(sid, "again")  # same code: the deadline stays
    await b.h.turns(sid, 2)
    same = await b.h.store.get_session(sid)
    assert same is not None and same.deadline == created.deadline
    await b.deploy(build("2", agent=limited))
    await b.h.send(sid, "and again")  # a handoff: the full duration from now
    await b.h.turns(sid, 3)
    await b.h.stop()
    moved = await b.h.store.get_session(sid)
    assert moved is not None and moved.deadline is not None
    assert moved.deadline == pytest.approx(created.deadline + 30.0, abs=1.0)


async def test_a_rebuild_without_changes_moves_nothing(tmp_path: Path) -> None:
    b = await start(tmp_path, build("1"))
    first = b.reloader.manifest.content_hash
    sid = await b.h.create("hi")
    await b.h.turns(sid, 1)
    assert await b.deploy(build("1")) == first
    await b.h.send(sid, "again")
    await b.h.turns(sid, 2)
    await b.h.stop()
    assert await b.deployment(sid) == first


async def test_a_message_arriving_during_the_handoff_is_handled_once_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = await start(tmp_path, build("1"))
    sid = await b.h.create("/call version {}")
    await b.h.turns(sid, 1)
    second = await b.deploy(build("2"))
    moving, gate = asyncio.Event(), asyncio.Event()

    async def slow_hand_off(actor: Any, root: Any) -> None:
        moving.set()
        await gate.wait()
        await hand_off(actor, root)

    monkeypatch.setattr("eve_runtime.engine.handoff.hand_off", slow_hand_off)
    await b.h.send(sid, "/call version {}")
    await asyncio.wait_for(moving.wait(), 5)
    payload = {"message": "during", "turnPolicy": "queue"}
    during = await b.h.rt.deliver(sid, "message", payload, idempotency_key="k-during")
    again = await b.h.rt.deliver(sid, "message", payload, idempotency_key="k-during")  # a retry
    assert again.id == during.id
    gate.set()
    await b.h.turns(sid, 3)
    await asyncio.sleep(0.1)  # nothing more comes
    events = await b.h.events(sid)
    await b.h.stop()
    received = [e["data"]["message"] for e in of_type(events, "message.received")]
    assert received == ["/call version {}", "/call version {}", "during"]
    assert outputs(events) == ["1", "2"] and types(events).count("session.waiting") == 3
    assert [e["meta"]["deliveryIds"] for e in of_type(events, "message.received")][-1] == [during.id]
    assert await b.deployment(sid) == second


def with_helper(label: str) -> dict[str, str]:
    """A build with a subagent whose tool names the build."""
    return {
        **build(label),
        "agent/subagents/helper/agent.py": (
            'from eve_runtime import define_agent\n\nagent = define_agent(model="test", description="Helps.")\n'
        ),
        "agent/subagents/helper/instructions.md": "You help.\n",
        "agent/subagents/helper/tools/which.py": (
            f'def which() -> str:\n    """Name the build."""\n    return "helper {label}"\n'
        ),
    }


async def test_a_subagent_started_by_a_busy_session_runs_its_parents_code(tmp_path: Path) -> None:
    b = await start(tmp_path, with_helper("1"))
    first = b.reloader.manifest.content_hash
    sid = await b.h.create('/delay 100\n/call helper {"message": "/call which {}"}')
    await b.h.wait_for(sid, lambda ev: "step.started" in types(ev))
    await b.deploy(with_helper("2"))  # before the parent calls its subagent
    events = await b.h.turns(sid, 1)
    children = [s for s in await b.h.store.list_sessions() if s.id != sid]
    assert len(children) == 1
    child_events = await b.h.events(children[0].id)
    await b.h.stop()
    assert outputs(child_events) == ["helper 1"]
    assert children[0].deployment == first
    assert "helper 1" in json.dumps(of_type(events, "task.settled"))


@pytest.mark.parametrize("control", ["reset", "cancel"])
async def test_a_reset_or_cancel_never_moves_an_idle_session(tmp_path: Path, control: str) -> None:
    b = await start(tmp_path, build("1"))
    first = b.reloader.manifest.content_hash
    sid = await b.h.create("/call version {}")
    await b.h.turns(sid, 1)
    await asyncio.sleep(0.05)  # the actor leaves: the next delivery starts a fresh one
    assert await b.deploy(build("2")) != first
    if control == "reset":
        assert await b.h.rt.reset(sid)
    else:
        await b.h.rt.cancel(sid)
        await asyncio.sleep(0.1)
    assert await b.deployment(sid) == first
    if control == "cancel":
        await b.h.send(sid, "/call version {}")  # the next message moves it
        events = await b.h.turns(sid, 2)
        assert outputs(events) == ["1", "2"]
        assert await b.deployment(sid) != first
    await b.h.stop()


async def test_a_build_that_cannot_run_a_session_refuses_the_handoff_and_logs_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import dataclasses

    from eve_runtime.store.base import NewDelivery

    b = await start(tmp_path, build("1"))
    # a subagent's session recorded on an earlier build, whose subagent this build no longer has
    record = dataclasses.replace(b.h.rt.new_record(), agent="node:subagents/gone", deployment="sha256:" + "0" * 64)
    first = NewDelivery(id="d-gone", kind="message", payload={"message": "more work"})
    session, _ = await b.h.store.create_session(record, first)
    with caplog.at_level(logging.WARNING, logger="eve.handoff"):
        b.h.rt.look_after(session)
        for _ in range(500):  # the actor decides once it loaded the session
            if any(r.getMessage().startswith("session handoff failed") for r in caplog.records):
                break
            await asyncio.sleep(0.01)
    pending = await b.h.store.pending_deliveries(session.id)
    stored = await b.h.store.get_session(session.id)
    events = await b.h.events(session.id)
    await b.h.stop()
    refused = [r for r in caplog.records if r.getMessage().startswith("session handoff refused")]
    failed = [r for r in caplog.records if r.getMessage().startswith("session handoff failed")]
    assert [(r.levelname, getattr(r, "checkpointVersion", None)) for r in refused] == [("WARNING", 1)]
    assert "subagents/gone" in getattr(refused[0], "reason", "")
    assert [(r.levelname, getattr(r, "targetDeployment", None)) for r in failed] == [
        ("WARNING", b.reloader.manifest.content_hash)
    ]
    # it stays where it was: nothing ran, its delivery waits for a build that can run it
    assert stored is not None and stored.status == "active" and stored.deployment == record.deployment
    assert [d.id for d in pending] == ["d-gone"] and events == []
