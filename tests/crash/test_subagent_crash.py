"""kill -9 an `eve start` process while a subagent's task works; restart; the task settles exactly once.

The root agent delegates to a `helper` subagent whose `record` tool appends one fsynced line per
execution to the ledger (the harness's ledger tool), so "the child's effect ran exactly once" is
checkable. After every kill the same app and store are served again, and:

- the parent's turn ends (`task.settled` once, `completed`, with the child's reply; `turn.completed`;
  `session.waiting`), and the child's stream has exactly one `turn.completed` for the work;
- no task is lost: every child session in the store was announced by the parent (`agent.started`)
  and every announced task settled once; no task is duplicated: one child, one effect;
- the harness's invariants hold on the parent's and the child's streams.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.crash.harness import LEDGER_TOOL, Client, EveProcess, check, read_ledger, scaffold

pytestmark = pytest.mark.scenario

Events = list[dict[str, Any]]

HELPER_FILES = {
    "agent.py": (
        "from eve_runtime import define_agent\n\n"
        'agent = define_agent(model="test", description="A helper that records things.")\n'
    ),
    "instructions.md": "You help.\n",
    "tools/record.py": LEDGER_TOOL,
}
CHILD_AGENT = "node:subagents/helper"
"""The `agent` column of a helper child session in the store."""


def scaffold_with_helper(root: Path) -> Path:
    """The harness's app plus a `helper` subagent with the ledger tool `record`."""
    app = scaffold(root)
    helper = app / "agent" / "subagents" / "helper"
    for name, text in HELPER_FILES.items():
        (helper / name).parent.mkdir(parents=True, exist_ok=True)
        (helper / name).write_text(text)
    return app


def delegate(child_message: str) -> str:
    """A root message that makes the root call `helper` with `child_message` (one line)."""
    return "/call helper " + json.dumps({"message": child_message})


def record(label: str, seconds: float = 0.0) -> str:
    arguments: dict[str, Any] = {"label": label}
    if seconds:
        arguments["seconds"] = seconds
    return "/call record " + json.dumps(arguments)


def of_type(events: Events, kind: str) -> Events:
    return [e for e in events if e["type"] == kind]


def types(events: Events) -> list[str]:
    return [str(e["type"]) for e in events]


def wait_until(client: Client, session: str, done: Callable[[Events], bool], what: str, timeout: float = 20) -> Events:
    """Poll the session's durable stream until `done(events)`."""
    deadline = time.monotonic() + timeout
    events: Events = []
    while time.monotonic() < deadline:
        events = client.events(session)
        if done(events):
            return events
        time.sleep(0.03)
    raise AssertionError(f"{what}: never happened; {session} ends with {types(events)[-10:]}")


def parked_on_tasks(events: Events) -> bool:
    return bool(events) and events[-1]["type"] == "turn.waiting" and events[-1]["data"]["on"] == "tasks"


def the_child(events: Events) -> str:
    started = of_type(events, "agent.started")
    assert len(started) == 1, types(events)
    return str(started[0]["data"]["sessionId"])


def read_store(app: Path, sql: str, *parameters: str) -> list[Any]:
    """Rows of the app's SQLite store, read-only (beside a running process, or after a kill)."""
    path = app / ".eve" / "workflow-data" / "eve.sqlite3"
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return [row[0] for row in connection.execute(sql, parameters).fetchall()]
    finally:
        connection.close()


def child_sessions_in_store(app: Path) -> set[str]:
    """Every helper child session the store holds, announced to its parent or not."""
    return {str(i) for i in read_store(app, "SELECT id FROM sessions WHERE agent = ?", CHILD_AGENT)}


def events_offline(app: Path, session: str) -> Events:
    """A session's durable events, read from the store while no process serves it."""
    lines = read_store(app, "SELECT line FROM events WHERE session_id = ? ORDER BY idx", session)
    return [json.loads(line) for line in lines]


def client_events_offline(app: Path, session: str) -> list[str]:
    return types(events_offline(app, session))


def step_attempts(events: Events, step: int) -> int:
    return sum(1 for e in of_type(events, "step.started") if e["data"]["stepIndex"] == step)


def assert_settled_once(client: Client, app: Path, parent: str, ledger: Path, *, output: str) -> tuple[Events, Events]:
    """The parent's turn completed with the child's reply, once; one child, one turn, one effect."""
    events = client.wait_quiet(parent, turns=1, timeout=20)
    child = the_child(events)
    child_events = client.wait_quiet(child, turns=1, timeout=20)
    settled = [e["data"] for e in of_type(events, "task.settled")]
    assert len(settled) == 1, settled
    assert settled[0]["status"] == "completed" and settled[0]["output"] == output, settled[0]
    assert len(of_type(events, "task.started")) == 1
    names = types(events)
    assert names.count("turn.started") == names.count("turn.completed") == 1, names
    assert names.index("task.settled") < names.index("turn.completed")
    assert names[-2:] == ["turn.completed", "session.waiting"], names
    child_names = types(child_events)
    assert child_names.count("turn.started") == child_names.count("turn.completed") == 1, child_names
    assert [(line["label"], line["session"]) for line in read_ledger(ledger)] == [("child", child)]
    assert child_sessions_in_store(app) == {child}  # no second child, no orphan
    report = check(client, [parent, child], ledger)
    assert report.violations() == {}, report
    return events, child_events


@pytest.mark.parametrize("moment", ["model-call", "mid-tool"])
def test_a_kill_while_the_child_works_settles_its_task_once(tmp_path: Path, moment: str) -> None:
    app = scaffold_with_helper(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    if moment == "model-call":  # killed while the child's model is slowly streaming its tool call
        child_message = f"/delay 400\n{record('child')}\n/reply child done"
    else:  # killed while the child's tool runs (its effect is done, its result not recorded)
        child_message = f"{record('child', seconds=5)}\n/reply child done"
    try:
        server.start()
        created = client.create("op-1", delegate(child_message))
        assert created.session is not None
        parent = created.session
        events = wait_until(client, parent, parked_on_tasks, "the parent parked on its task")
        child = the_child(events)
        if moment == "model-call":
            wait_until(client, child, lambda ev: "step.started" in types(ev), "the child's first step")
        else:
            deadline = time.monotonic() + 20
            while not read_ledger(ledger) and time.monotonic() < deadline:
                time.sleep(0.02)
        server.kill()
        before = client_events_offline(app, child)
        assert "turn.completed" not in before  # the kill landed while the child worked
        assert len(read_ledger(ledger)) == (0 if moment == "model-call" else 1)
        server.start()
        _, child_events = assert_settled_once(client, app, parent, ledger, output="child done")
        assert step_attempts(child_events, 0) == 2  # the child's interrupted step ran again...
        results = of_type(child_events, "action.result")
        if moment == "mid-tool":  # ...but its started call did not: it is closed once, as abandoned
            assert [r["data"]["error"]["code"] for r in results] == ["ACTION_ABANDONED"]
            assert len(of_type(child_events, "actions.requested")) == 1
        else:
            assert [r["data"]["result"]["output"] for r in results] == [{"recorded": "child"}]
    finally:
        server.kill()


def test_a_kill_after_the_childs_effect_before_its_reply_settles_once(tmp_path: Path) -> None:
    app = scaffold_with_helper(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    reply = "the child finished its work and reports back now"  # 9 words of 200 ms: killed meanwhile
    try:
        server.start()
        created = client.create("op-1", delegate(f"/delay 200\n{record('child')}\n/reply {reply}"))
        assert created.session is not None
        parent = created.session
        events = wait_until(client, parent, parked_on_tasks, "the parent parked on its task")
        child = the_child(events)

        def replying(ev: Events) -> bool:  # the effect is recorded and the slow reply streams
            return bool(of_type(ev, "action.result")) and step_attempts(ev, 1) == 1

        wait_until(client, child, replying, "the child's reply step")
        server.kill()
        before = client_events_offline(app, child)
        assert "action.result" in before and "turn.completed" not in before
        assert parked_on_tasks(events_offline(app, parent))  # the parent is still waiting on its task
        assert len(read_ledger(ledger)) == 1
        server.start()
        _, child_events = assert_settled_once(client, app, parent, ledger, output=reply)
        assert step_attempts(child_events, 0) == 1  # the completed step (and its call) never ran again
        assert step_attempts(child_events, 1) == 2  # the interrupted reply ran again
    finally:
        server.kill()


CRASH_CASES = [
    # (id, crash point, where it lands, a child session exists at the kill, ledger lines at the kill)
    (
        "before-dispatch",
        "after-actions-requested:1",
        "the parent's dispatch step: the call's start is durable",
        False,
        0,
    ),
    # Until 3465ff7 the child was created before the parent's task events were durable: killed here, the parent
    # answered the call as abandoned while the orphaned child ran its effect and its report was dropped.
    ("after-dispatch", "before-checkpoint:1", "the parent's dispatch step: the child session was created", True, 0),
    ("parent-next-step", "during-model-call:1", "the parent's next step streams while the task works", True, 0),
    ("child-turn-start", "after-turn-start:2", "the child's turn started", True, 0),
    ("child-tool-effect", "after-tool-effect:1", "the child's effect happened, its result is not recorded", True, 1),
    ("child-turn-end", "before-turn-end:1", "the child's turn ends, before it reports to the parent", True, 1),
]


@pytest.mark.parametrize(
    ("crashpoint", "where", "child_at_kill", "effects_at_kill"),
    [c[1:] for c in CRASH_CASES],
    ids=[c[0] for c in CRASH_CASES],
)
def test_a_crash_point_around_a_dispatch_never_loses_or_duplicates_a_task(
    tmp_path: Path, crashpoint: str, where: str, child_at_kill: bool, effects_at_kill: int
) -> None:
    app = scaffold_with_helper(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start(crashpoint=crashpoint)
        # the child's first step is slow: the parent's next step streams before the child's effect happens
        created = client.create("op-1", delegate(f"/delay 50\n{record('child')}\n/reply child done"))
        assert created.outcome == "ok" and created.session is not None
        parent = created.session
        assert server.wait_dead(), f"the process did not die at {crashpoint} ({where})"
        server.kill()
        assert bool(child_sessions_in_store(app)) == child_at_kill, where
        assert len(read_ledger(ledger)) == effects_at_kill, where
        server.start()
        events = client.wait_quiet(parent, turns=1, timeout=20)
        announced = [str(e["data"]["sessionId"]) for e in of_type(events, "agent.started")]
        for child in announced:
            client.wait_quiet(child, turns=1, timeout=20)
        time.sleep(0.3)  # an unannounced child, if any, gets time to run its effect
        started = Counter(str(e["data"]["taskId"]) for e in of_type(events, "task.started"))
        settled = Counter(str(e["data"]["taskId"]) for e in of_type(events, "task.settled"))
        names = types(events)
        assert names.count("turn.started") == names.count("turn.completed") == 1, names
        assert names[-2:] == ["turn.completed", "session.waiting"], names
        # no duplicated task: at most one child, started once, settled once, one effect
        assert len(announced) <= 1 and set(started.values()) <= {1} and settled == started, (started, settled)
        assert len(read_ledger(ledger)) <= 1
        # no lost task: every child session in the store is the parent's announced task, and only it had effects
        assert child_sessions_in_store(app) == set(announced), (child_sessions_in_store(app), announced)
        assert {line["session"] for line in read_ledger(ledger)} <= set(announced)
        if announced:
            (child,) = announced
            assert [e["data"]["status"] for e in of_type(events, "task.settled")] == ["completed"]
            assert of_type(events, "task.settled")[0]["data"]["output"] == "child done"
            assert types(client.events(child)).count("turn.completed") == 1
            assert [line["session"] for line in read_ledger(ledger)] == [child]
        else:  # the call never started a task: the model is told its outcome is unknown
            assert read_ledger(ledger) == []
            final = of_type(events, "message.completed")[-1]["data"]["message"]
            assert "interrupted before its result was recorded" in final
        report = check(client, [parent, *announced], ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()
