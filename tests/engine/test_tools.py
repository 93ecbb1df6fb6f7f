"""Tool execution: threads and tasks, generators, failures, context, invalid input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eve_runtime.messages import Message, ToolCall, ToolMessage
from eve_runtime.models import FunctionInfo, FunctionModel
from tests.harness import Harness, last_reply, make_harness, of_type

pytestmark = pytest.mark.anyio

TOOLS = {
    "agent/tools/progress.py": '''
def progress(steps: int) -> int:
    """Count up, reporting progress."""
    for i in range(steps):
        yield {"done": i + 1}
    return steps * 10
''',
    "agent/tools/progress_async.py": '''
async def progress_async(steps: int):
    """Count up asynchronously."""
    for i in range(steps):
        yield {"done": i + 1}
''',
    "agent/tools/explode.py": '''
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"explode: {reason}")
''',
    "agent/tools/refuse.py": '''
def refuse() -> dict:
    """Returns an error object."""
    return {"code": "NOT_ALLOWED", "message": "not today"}
''',
    "agent/tools/where.py": '''
import threading
from eve_runtime import ToolContext

def where(ctx: ToolContext) -> dict:
    """Report the thread and the call."""
    return {"thread": threading.current_thread().name, "call": ctx.call_id, "tool": ctx.tool_name, "turn": ctx.turn_id}
''',
    "agent/tools/where_async.py": '''
import asyncio

async def where_async() -> str:
    """Runs on the event loop."""
    await asyncio.sleep(0)
    return "async"
''',
}


@pytest.fixture
async def tools(tmp_path: Path) -> Harness:
    return await make_harness(tmp_path, TOOLS)


async def run(h: Harness, message: str) -> list[dict[str, Any]]:
    sid = await h.create(message)
    events = await h.turns(sid, 1)
    await h.stop()
    return events


async def test_sync_generator_streams_partials_and_returns(tools: Harness) -> None:
    events = await run(tools, '/call progress {"steps": 2}')
    partials = of_type(events, "action.partial")
    assert [p["data"]["result"]["output"] for p in partials] == [{"done": 1}, {"done": 2}]
    assert partials[0]["data"]["result"]["kind"] == "tool-result"
    result = of_type(events, "action.result")[0]
    assert result["data"]["result"]["output"] == 20
    assert events.index(partials[-1]) < events.index(result)
    assert last_reply(events) == "progress -> 20"


async def test_async_generator_result_is_the_last_yield(tools: Harness) -> None:
    events = await run(tools, '/call progress_async {"steps": 3}')
    assert len(of_type(events, "action.partial")) == 3
    assert of_type(events, "action.result")[0]["data"]["result"]["output"] == {"done": 3}


async def test_a_raising_tool_fails_the_call_not_the_turn(tools: Harness) -> None:
    events = await run(tools, '/call explode {"reason": "test"}')
    data = of_type(events, "action.result")[0]["data"]
    assert data["status"] == "failed"
    assert data["error"] == {"code": "ACTION_RESULT_FAILED", "message": "explode: test", "name": "RuntimeError"}
    assert data["result"]["isError"] is True and data["result"]["errorName"] == "RuntimeError"
    assert data["result"]["output"] == "explode: test"
    assert last_reply(events) == 'explode -> "RuntimeError: explode: test"'
    assert events[-1]["type"] == "session.waiting"


async def test_an_error_object_is_a_failed_result(tools: Harness) -> None:
    events = await run(tools, "/call refuse {}")
    data = of_type(events, "action.result")[0]["data"]
    assert data["status"] == "failed"
    assert data["error"] == {"code": "NOT_ALLOWED", "message": "not today"}


async def test_unknown_tool_and_invalid_input(tools: Harness) -> None:
    events = await run(tools, '/call nothing {}\n/call progress {"steps": "many"}')
    results = {r["data"]["result"]["toolName"]: r["data"] for r in of_type(events, "action.result")}
    assert results["nothing"]["error"]["code"] == "UNKNOWN_TOOL"
    assert results["progress"]["error"]["code"] == "INVALID_TOOL_INPUT"
    assert "steps" in results["progress"]["error"]["message"]


async def test_sync_tools_run_in_worker_threads_with_their_context(tools: Harness) -> None:
    events = await run(tools, "/call where {}\n/call where_async {}")
    results = {r["data"]["result"]["toolName"]: r["data"]["result"] for r in of_type(events, "action.result")}
    output = results["where"]["output"]
    assert output["thread"].startswith("eve-tool")
    assert output["call"] == results["where"]["callId"] and output["tool"] == "where" and output["turn"] == "turn_0"
    assert results["where_async"]["output"] == "async"


async def test_the_model_reads_tool_results_and_errors(tmp_path: Path) -> None:
    seen: list[list[Message]] = []

    def respond(messages: list[Message], info: FunctionInfo) -> str | list[ToolCall]:
        seen.append(messages)
        if info.call_count == 1:
            return [ToolCall(id="a", name="explode", arguments={"reason": "x"}), ToolCall(id="b", name="refuse")]
        return "done"

    h = await make_harness(tmp_path, TOOLS, models={"test": FunctionModel(respond)})
    await run(h, "go")
    tool_messages = [m for m in seen[1] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content, m.is_error) for m in tool_messages] == [
        ("a", "RuntimeError: explode: x", True),
        ("b", '{"code":"NOT_ALLOWED","message":"not today"}', False),
    ]
