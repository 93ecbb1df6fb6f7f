"""The framework tools through a session on the `test` model: eve's inputs, results and failures.

Each test runs on the memory and the SQLite store (the `harness_store` fixture), with the default
backend of this machine (bubblewrap where it runs, else `local`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.messages import Message
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.sandbox import FRAMEWORK_TOOLS
from tests.harness import Harness, StoreKind, make_harness, of_type, types

pytestmark = pytest.mark.anyio

LINES = "".join(f"line{i}\n" for i in range(1, 11))
SEED = {"agent/sandbox/workspace/lines.txt": LINES, "agent/sandbox/workspace/src/app.py": "print('hi')\n"}
SEARCH = {
    "agent/tools/glob.py": "from eve_runtime.framework_tools import glob\n",
    "agent/tools/grep.py": "from eve_runtime.framework_tools import grep\n",
}


@pytest.fixture(autouse=True)
def _on_each_store(harness_store: StoreKind) -> StoreKind:
    return harness_store


def call(name: str, **arguments: Any) -> str:
    return f"/call {name} {json.dumps(arguments)}"


async def run(h: Harness, *lines: str, session: str | None = None) -> list[dict[str, Any]]:
    """One turn; its events (all of the session's when it is a later turn)."""
    if session is None:
        sid = await h.create("\n".join(lines))
        return await h.turns(sid, 1, timeout=20)
    before = len(of_type(await h.events(session), "session.waiting"))
    await h.send(session, "\n".join(lines))
    return await h.turns(session, before + 1, timeout=20)


def results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(events, "action.result")]


def output(events: list[dict[str, Any]], index: int = -1) -> Any:
    return results(events)[index]["result"]["output"]


@pytest.fixture
async def h(tmp_path: Path) -> Any:
    harness = await make_harness(tmp_path, {**SEED, **SEARCH})
    yield harness
    await harness.stop()


async def test_bash_echo(h: Harness) -> None:
    events = await run(h, call("bash", command="echo hi"))
    kinds = types(events)
    assert kinds.index("action.input.appended") < kinds.index("actions.requested") < kinds.index("action.result")
    (result,) = results(events)
    assert result["status"] == "completed" and result["result"]["toolName"] == "bash"
    assert result["result"]["output"] == {
        "status": "completed",
        "exitCode": 0,
        "stderr": "",
        "stdout": "hi\n",
        "truncated": False,
    }


async def test_bash_reports_a_nonzero_exit_as_a_result(h: Harness) -> None:
    events = await run(h, call("bash", command="echo oops >&2; exit 4"))
    (result,) = results(events)
    assert result["status"] == "completed"
    assert (result["result"]["output"]["exitCode"], result["result"]["output"]["stderr"]) == (4, "oops\n")


async def test_bash_keeps_the_end_of_long_output(h: Harness) -> None:
    out = output(await run(h, call("bash", command="seq 1 5000")))
    assert out["truncated"] is True
    assert out["stdout"].startswith("[stdout truncated: showing last 2000 of 5000 lines]\n3001\n")
    assert out["stdout"].endswith("5000\n")


async def test_bash_is_killed_at_the_sandbox_time_limit(tmp_path: Path) -> None:
    limited = {
        "agent/sandbox.py": "from eve_runtime import define_sandbox\n\nsandbox = define_sandbox(timeout_seconds=1)\n"
    }
    h = await make_harness(tmp_path, limited)
    try:
        out = output(await run(h, call("bash", command="echo started; sleep 10")))
    finally:
        await h.stop()
    assert out["exitCode"] == 124 and out["stdout"] == "started\n"
    assert out["stderr"].endswith("[killed: the command ran longer than 1 s]\n")


async def test_calls_in_one_step_share_the_sandbox(h: Harness) -> None:
    sid = await h.create(
        call("bash", command="echo a > a.txt") + "\n" + call("write_file", filePath="b.txt", content="b")
    )
    events = await h.turns(sid, 1, timeout=20)
    assert [r["status"] for r in results(events)] == ["completed", "completed"]
    events = await run(h, call("bash", command="cat a.txt b.txt"), session=sid)
    assert output(events)["stdout"] == "a\nb"


async def test_read_file_line_ranges(h: Harness) -> None:
    sid = await h.create(call("read_file", filePath="/workspace/lines.txt", offset=3, limit=2))
    events = await h.turns(sid, 1, timeout=20)
    assert output(events) == {
        "content": "3: line3\n4: line4",
        "path": "/workspace/lines.txt",
        "totalLines": 10,
        "nextOffset": 5,
        "truncated": True,
    }
    events = await run(h, call("read_file", filePath="lines.txt", offset=9), session=sid)
    assert output(events) == {
        "content": "9: line9\n10: line10",
        "path": "/workspace/lines.txt",
        "totalLines": 10,
        "truncated": False,
    }


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"filePath": "/workspace/missing.txt"}, "File not found: /workspace/missing.txt"),
        ({"filePath": "/etc/passwd"}, "outside the sandbox"),
        ({"filePath": "../../etc/passwd"}, "climbs out"),
        ({"filePath": "lines.txt", "offset": 50}, "past the end of the file (10 lines)"),
        ({"filePath": "lines.txt", "offset": 0}, "offset"),
    ],
)
async def test_read_file_bad_input_is_a_failed_result(h: Harness, arguments: dict[str, Any], fragment: str) -> None:
    events = await run(h, call("read_file", **arguments))
    (result,) = results(events)
    assert result["status"] == "failed"
    assert fragment in json.dumps(result["result"]["output"])
    assert "turn.completed" in types(events)  # the model reads the failure; the turn goes on


async def test_write_file_reads_before_it_overwrites(h: Harness) -> None:
    sid = await h.create(call("write_file", filePath="/workspace/new.txt", content="one"))
    events = await h.turns(sid, 1, timeout=20)
    assert output(events) == {"existed": False, "path": "/workspace/new.txt"}
    events = await run(h, call("write_file", filePath="lines.txt", content="x"), session=sid)
    assert results(events)[-1]["status"] == "failed"
    assert "You must read file lines.txt before overwriting it" in json.dumps(output(events))
    await run(h, call("read_file", filePath="lines.txt"), session=sid)
    events = await run(h, call("write_file", filePath="lines.txt", content="rewritten\n"), session=sid)
    assert output(events) == {"existed": True, "path": "/workspace/lines.txt"}
    await run(h, call("bash", command="echo changed > lines.txt"), session=sid)
    events = await run(h, call("write_file", filePath="lines.txt", content="again"), session=sid)
    assert "has been modified since it was last read" in json.dumps(output(events))
    events = await run(h, call("bash", command="cat lines.txt new.txt"), session=sid)
    assert output(events)["stdout"] == "changed\none"


async def test_glob_and_grep_search_the_workspace(h: Harness) -> None:
    sid = await h.create(call("glob", pattern="**/*.py"))
    events = await h.turns(sid, 1, timeout=20)
    assert output(events) == {"content": "/workspace/src/app.py", "count": 1, "path": "/workspace", "truncated": False}
    events = await run(h, call("grep", pattern="line1[0-9]?$", glob="*.txt"), session=sid)
    assert output(events) == {
        "content": "/workspace/lines.txt:1:line1\n/workspace/lines.txt:10:line10",
        "matchCount": 2,
        "path": "/workspace",
        "truncated": False,
    }
    events = await run(h, call("grep", pattern="LINE5", ignoreCase=True, context=1), session=sid)
    assert (
        output(events)["content"]
        == "/workspace/lines.txt-4-line4\n/workspace/lines.txt:5:line5\n/workspace/lines.txt-6-line6"
    )
    events = await run(h, call("glob", pattern="*.nothing"), session=sid)
    assert output(events)["content"] == "No files found"
    events = await run(h, call("grep", pattern="(unclosed"), session=sid)
    assert results(events)[-1]["status"] == "failed"


async def test_the_model_gets_eves_input_schemas(tmp_path: Path) -> None:
    offered: dict[str, Any] = {}

    def respond(messages: list[Message], info: FunctionInfo) -> str:
        offered.update({t.name: t for t in info.tools})
        return "ok"

    h = await make_harness(tmp_path, SEARCH, models={"test": FunctionModel(respond)})
    try:
        await h.turns(await h.create("hi"), 1)
    finally:
        await h.stop()
    for name in ("bash", "read_file", "write_file", "web_fetch", "glob", "grep"):
        assert offered[name].input_schema == FRAMEWORK_TOOLS[name][1], name
    assert offered["read_file"].input_schema["required"] == ["filePath"]
    assert "web_search" not in offered  # no provider set


async def test_default_tools_false_drops_them_and_opt_ins_stay_off(tmp_path: Path) -> None:
    offered: list[str] = []

    def respond(messages: list[Message], info: FunctionInfo) -> str:
        offered.extend(t.name for t in info.tools)
        return "ok"

    agent = "from eve_runtime import define_agent\n\nagent = define_agent(model='test', default_tools=False)\n"
    h = await make_harness(tmp_path, {"agent/agent.py": agent}, models={"test": FunctionModel(respond)})
    try:
        await h.turns(await h.create("hi"), 1)
    finally:
        await h.stop()
    assert not {"bash", "read_file", "write_file", "web_fetch", "glob", "grep"} & set(offered)
