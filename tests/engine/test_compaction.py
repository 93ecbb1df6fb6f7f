"""Compaction: on request (checks 26-28) and automatic, bounded history, and crashes mid-way."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from eve_runtime.engine.compaction import SUMMARY_HEADER, estimate_tokens
from eve_runtime.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from eve_runtime.models import TestModel
from eve_runtime.models.base import ModelEvent, ModelRequest, ToolDefinition
from eve_runtime.models.test_summary import is_summary_request
from tests.harness import (
    Harness,
    last_reply,
    make_harness,
    of_type,
    types,
)

pytestmark = pytest.mark.anyio

SMALL_WINDOW = {
    "agent/agent.py": (
        "from eve_runtime import define_agent\n\n"
        "agent = define_agent(model='test', model_context_window_tokens=1500, compaction={'threshold_percent': 0.8},\n"
        "                     default_tools=False)\n"  # the window is sized for this test's own tool alone
    )
}


class Recording(TestModel):
    """The test model, remembering every request; a summary request can be made to hang."""

    def __init__(self) -> None:
        super().__init__("test")
        self.requests: list[ModelRequest] = []
        self.hang_summaries = False

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self.hang_summaries and is_summary_request(request.messages[-1].content):
            await asyncio.Event().wait()
        async for event in super().stream(request):
            yield event

    def turn_requests(self) -> list[ModelRequest]:
        return [r for r in self.requests if not is_summary_request(r.messages[-1].content)]


def conversation(request: ModelRequest) -> list[tuple[str, str]]:
    """The request's non-system messages as (role, content)."""
    return [(m.role, m.content) for m in request.messages if not isinstance(m, SystemMessage)]


async def history(h: Harness, sid: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in await h.store.load_history(sid)]


async def test_compact_on_a_waiting_session(tmp_path: Path) -> None:
    """Check 26 and the recording o_clear_and_compact: requested, completed, waiting; the next turn
    sees the summary instead of the old messages."""
    model = Recording()
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("remember me")
    before = (await h.turns(sid, 1))[-1]["data"]["usage"]
    await h.rt.deliver(sid, "compact", {})
    events = await h.turns(sid, 2)
    assert types(events)[-3:] == ["compaction.requested", "compaction.completed", "session.waiting"]
    requested, completed = of_type(events, "compaction.requested")[0], of_type(events, "compaction.completed")[0]
    coordinates = {"modelId": "test", "sequence": 1, "sessionId": sid, "stepIndex": 0, "turnId": "turn_1"}
    assert {k: v for k, v in requested["data"].items() if k != "usageInputTokens"} == coordinates
    assert isinstance(requested["data"]["usageInputTokens"], float) and requested["data"]["usageInputTokens"] > 0
    assert completed["data"] == coordinates
    assert requested["meta"]["deliveryIds"] == events[0]["meta"]["deliveryIds"]  # the previous turn's
    after = events[-1]["data"]["usage"]
    assert after["inputTokens"] > before["inputTokens"]  # as recorded: the summary call is counted
    summary_request = model.requests[-1]
    assert summary_request.tools == ()
    assert isinstance(summary_request.messages[0], SystemMessage)  # system instructions stay outside
    prompt = summary_request.messages[-1].content
    assert prompt.startswith("<previous-checkpoint>\n(none)\n</previous-checkpoint>")
    assert "### user\nremember me" in prompt and "### assistant\necho: remember me" in prompt

    await h.send(sid, "after compact")
    events = await h.turns(sid, 3)
    await h.stop()
    assert of_type(events, "turn.started")[-1]["data"]["turnId"] == "turn_1"
    assert conversation(model.requests[-1]) == [
        ("user", SUMMARY_HEADER),
        ("assistant", "summary of 2 messages; last user message: remember me"),
        ("user", "after compact"),
    ]
    assert [m["role"] for m in await history(h, sid)] == ["user", "assistant", "user", "assistant"]


async def test_compact_during_a_turn_waits_for_its_boundary(tmp_path: Path) -> None:
    """Check 27: accepted at once, but `compaction.requested` only after the running turn ended."""
    h = await make_harness(tmp_path)
    sid = await h.create("/delay 30\n/reply a slow answer")
    await h.wait_for(sid, lambda events: "step.started" in types(events))
    await h.rt.deliver(sid, "compact", {})
    events = await h.turns(sid, 2)
    await h.stop()
    kinds = types(events)
    assert kinds.index("compaction.requested") > kinds.index("turn.completed")
    assert kinds.index("compaction.requested") > kinds.index("session.waiting")
    assert kinds[-3:] == ["compaction.requested", "compaction.completed", "session.waiting"]


async def test_a_failed_summary_leaves_the_history_unchanged(tmp_path: Path) -> None:
    """Check 28: `session.waiting` follows, and the next turn still sees the old messages."""
    model = Recording()
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("/fail-summary no summary today")
    await h.turns(sid, 1)
    old = await history(h, sid)
    await h.rt.deliver(sid, "compact", {})
    events = await h.turns(sid, 2)
    assert types(events)[-2:] == ["compaction.requested", "session.waiting"]
    assert "compaction.completed" not in types(events)
    assert await history(h, sid) == old
    await h.send(sid, "still there?")
    await h.turns(sid, 3)
    await h.stop()
    assert conversation(model.requests[-1]) == [
        ("user", "/fail-summary no summary today"),
        ("assistant", "echo: /fail-summary no summary today"),
        ("user", "still there?"),
    ]


async def test_compacting_twice_folds_the_previous_summary_in(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("first")
    await h.turns(sid, 1)
    await h.rt.deliver(sid, "compact", {})
    await h.turns(sid, 2)
    await h.send(sid, "second")
    await h.turns(sid, 3)
    await h.rt.deliver(sid, "compact", {})
    await h.turns(sid, 4)
    await h.restart()  # what recovery reads is the compacted history
    await h.send(sid, "third")
    await h.turns(sid, 5)
    await h.stop()
    prompt = model.requests[-2].messages[-1].content
    assert prompt.startswith("<previous-checkpoint>\nsummary of 2 messages; last user message: first\n")
    assert SUMMARY_HEADER not in prompt  # the previous summary is passed on its own, not as a message
    assert conversation(model.requests[-1]) == [
        ("user", SUMMARY_HEADER),
        ("assistant", "summary of 4 messages; last user message: second"),
        ("user", "third"),
    ]


async def test_automatic_compaction_keeps_the_context_bounded(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, SMALL_WINDOW, models={"test": model})
    sid = await h.create('/call get_weather {"city": "Paris"}')
    for turn in range(1, 25):
        await h.turns(sid, turn)
        words = " ".join(f"word{turn}x{i}" for i in range(40))
        await h.send(sid, f'/call get_weather {{"city": "Paris"}}\n{words}')
    events = await h.turns(sid, 25)
    await h.stop()
    assert types(events).count("turn.completed") == 25
    requested = of_type(events, "compaction.requested")
    assert len(requested) >= 3
    assert len(requested) == len(of_type(events, "compaction.completed"))
    assert all(e["data"]["usageInputTokens"] >= 0.8 * 1500 for e in requested)
    assert last_reply(events).startswith("get_weather -> ")
    for request in model.turn_requests():
        assert estimate_tokens(request) < 1500
        _assert_calls_answered(request.messages)
    assert len(await history(h, sid)) < 30  # of the 100 messages the session produced


def _assert_calls_answered(messages: Sequence[Message]) -> None:
    """Every tool result follows the assistant message that called it (compaction never splits them)."""
    called: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            called |= {c.id for c in message.tool_calls}
        elif isinstance(message, ToolMessage):
            assert message.tool_call_id in called, [(m.role, m.content[:30]) for m in messages]


async def test_automatic_compaction_happens_inside_the_turn(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, SMALL_WINDOW, models={"test": model})
    long = " ".join(f"w{i}" for i in range(400))
    sid = await h.create(f"{long}")
    await h.turns(sid, 1)
    await h.send(sid, f'/call get_weather {{"city": "Oslo"}}\n{long}')
    events = await h.turns(sid, 2)
    await h.stop()
    turn_1 = [e for e in events if e["data"].get("turnId") == "turn_1"]
    requested = of_type(turn_1, "compaction.requested")
    assert requested, types(turn_1)
    assert requested[0]["data"]["stepIndex"] == 0
    kinds = types(turn_1)
    assert kinds.index("step.started") < kinds.index("compaction.requested") < kinds.index("compaction.completed")
    assert last_reply(events).startswith("get_weather -> ")
    request = model.turn_requests()[-1]
    assert isinstance(request.messages[1], UserMessage) and request.messages[1].content == SUMMARY_HEADER


async def test_a_crash_during_compaction_leaves_the_old_history(tmp_path: Path) -> None:
    """A kill while the summary is being written: the compaction is not run again, history is the old one."""
    model = Recording()
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("keep me")
    await h.turns(sid, 1)
    old = await history(h, sid)
    model.hang_summaries = True
    await h.rt.deliver(sid, "compact", {})
    await h.wait_for(sid, lambda events: "compaction.requested" in types(events))
    await h.restart()
    model.hang_summaries = False
    events = await h.turns(sid, 2)
    assert types(events)[-2:] == ["compaction.requested", "session.waiting"]
    assert await history(h, sid) == old
    await h.rt.deliver(sid, "compact", {})  # a later request compacts as usual
    events = await h.turns(sid, 3)
    await h.stop()
    assert types(events)[-3:] == ["compaction.requested", "compaction.completed", "session.waiting"]
    assert [m["content"] for m in await history(h, sid)] == [
        SUMMARY_HEADER,
        "summary of 2 messages; last user message: keep me",
    ]


async def test_compact_on_a_session_without_history_just_waits(harness: Harness) -> None:
    sid = await harness.create()
    await harness.rt.deliver(sid, "compact", {})
    events = await harness.turns(sid, 1)
    assert types(events) == ["session.waiting"]


def test_the_estimate_counts_each_tool_definition_once(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string", "description": "x" * 400}}}
    tools = [ToolDefinition(name=f"tool_{i}", description="Looks something up.", input_schema=schema) for i in range(3)]
    messages = [UserMessage(content="a" * 100)]
    expected = (100 + sum(len(t.name) + len(t.description) + len(json.dumps(schema)) for t in tools)) / 4
    assert estimate_tokens(ModelRequest(messages=messages, tools=tools)) == expected
    dumped: list[object] = []

    def dumps(value: object, **_: object) -> str:
        dumped.append(value)
        return "{}"

    monkeypatch.setattr(json, "dumps", dumps)  # the module compaction serializes with
    # The next step's request holds the same definitions (made once per agent): nothing is serialized again.
    assert estimate_tokens(ModelRequest(messages=[*messages, UserMessage(content="b")], tools=list(tools))) == (
        expected + 0.25
    )
    assert dumped == []
    fresh = ToolDefinition(name="tool_new", description="", input_schema=schema)
    estimate_tokens(ModelRequest(messages=messages, tools=[*tools, fresh]))
    assert dumped == [schema]  # a definition it had not seen is counted
