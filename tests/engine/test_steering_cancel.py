"""Steering, queued messages and cancel while a turn runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.messages import Message, ToolCall, ToolMessage, UserMessage
from eve_runtime.models import FunctionInfo, FunctionModel
from tests.harness import Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio

SLOW_TOOL = {
    "agent/tools/slow.py": '''
import asyncio

async def slow() -> str:
    """Takes forever."""
    await asyncio.sleep(60)
    return "late"
''',
    "agent/tools/quick.py": '''
import asyncio

async def quick() -> str:
    """Takes a moment."""
    await asyncio.sleep(0.05)
    return "quick"
''',
}


class Gated:
    """A model whose answers wait on gates: `hold` before any output, `mid` after the first word."""

    def __init__(self) -> None:
        self.hold = asyncio.Event()
        self.mid = asyncio.Event()
        self.seen: list[list[Message]] = []

    async def stream(self, messages: list[Message], info: FunctionInfo) -> AsyncIterator[str | ToolCall]:
        self.seen.append(messages)
        last = next(m for m in reversed(messages) if isinstance(m, UserMessage)).content
        if isinstance(messages[-1], ToolMessage):
            yield f"after tools: {messages[-1].content}"
            return
        if last.startswith("hold"):
            await self.hold.wait()
        if last.startswith("mid"):
            yield "partial "
            await self.mid.wait()
        if last.startswith("tool:"):
            yield "calling "
            yield ToolCall(id=f"c{info.call_count}", name=last.removeprefix("tool:"))
            return
        yield f"echo: {last}"


@pytest.fixture
async def gated(tmp_path: Path) -> tuple[Harness, Gated]:
    gate = Gated()
    harness = await make_harness(tmp_path, SLOW_TOOL, models={"test": FunctionModel(stream_function=gate.stream)})
    return harness, gate


def has(event_type: str, count: int = 1):  # type: ignore[no-untyped-def]
    return lambda events: len(of_type(events, event_type)) >= count


async def test_steering_before_output_joins_the_same_turn(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("hold first")
    await h.wait_for(sid, has("step.started"))
    second = await h.send(sid, "second")
    events = await h.turns(sid, 1)
    await h.stop()
    compact = [t for t in types(events) if t != "message.appended"]
    assert compact == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "step.completed",
        "message.received",
        "step.started",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    aborted = of_type(events, "step.completed")[0]["data"]
    assert aborted == {"finishReason": "other", "sequence": 0, "stepIndex": 0, "turnId": "turn_0"}
    steer = of_type(events, "message.received")[1]
    assert steer["data"]["turnId"] == "turn_0" and steer["data"]["message"] == "second"
    assert second in steer["meta"]["deliveryIds"] and len(steer["meta"]["deliveryIds"]) == 2
    assert of_type(events, "step.started")[1]["data"]["stepIndex"] == 1
    assert len(of_type(events, "session.waiting")[-1]["meta"]["deliveryIds"]) == 2
    assert last_reply(events) == "echo: second"
    usage = of_type(events, "session.waiting")[0]["data"]["usage"]
    assert usage["inputTokens"] == of_type(events, "step.completed")[1]["data"]["usage"]["inputTokens"]


async def test_steering_after_output_of_a_final_reply_starts_the_next_turn(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("mid first")
    await h.wait_for(sid, has("message.appended"))
    await h.send(sid, "second")
    await asyncio.sleep(0.05)
    gate.mid.set()
    events = await h.turns(sid, 2)
    await h.stop()
    assert [e["data"]["turnId"] for e in of_type(events, "turn.started")] == ["turn_0", "turn_1"]
    assert [e["data"]["message"] for e in of_type(events, "message.completed")] == [
        "partial echo: mid first",
        "echo: second",
    ]


async def test_steering_during_a_tool_joins_at_the_next_step(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("tool:quick")
    await h.wait_for(sid, has("actions.requested"))
    await h.send(sid, "while the tool runs")
    events = await h.turns(sid, 1)
    await h.stop()
    compact = [t for t in types(events) if t not in ("message.appended",)]
    assert compact[compact.index("action.result") :] == [
        "action.result",
        "step.completed",
        "message.received",
        "step.started",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    assert len(of_type(events, "turn.started")) == 1
    assert of_type(events, "action.result")[0]["data"]["result"]["output"] == "quick"


async def test_a_queued_message_waits_for_the_turn_to_end(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("hold first")
    await h.wait_for(sid, has("step.started"))
    await h.send(sid, "queued", turnPolicy="queue")
    await asyncio.sleep(0.05)
    assert len(of_type(await h.events(sid), "message.received")) == 1
    gate.hold.set()
    events = await h.turns(sid, 2)
    await h.stop()
    assert [e["data"]["turnId"] for e in of_type(events, "turn.started")] == ["turn_0", "turn_1"]
    assert last_reply(events) == "echo: queued"
    assert "turn.cancelled" not in types(events)


async def test_cancel_mid_output(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("mid first")
    await h.wait_for(sid, has("message.appended"))
    assert await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    await h.stop()
    assert types(events)[-3:] == ["message.appended", "turn.cancelled", "session.waiting"]
    assert "message.completed" not in types(events) and "step.completed" not in types(events)
    assert of_type(events, "session.waiting")[0]["data"]["usage"]["inputTokens"] == 0
    assert "turn.failed" not in types(events)


async def test_cancel_before_output_then_a_new_turn(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("hold first")
    await h.wait_for(sid, has("step.started"))
    assert await h.rt.cancel(sid)
    await h.turns(sid, 1)
    await h.send(sid, "after cancel")
    events = await h.turns(sid, 2)
    await h.stop()
    assert types(events)[:6] == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "turn.cancelled",
        "session.waiting",
    ]
    assert last_reply(events) == "echo: after cancel"
    history = gate.seen[-1]
    assert [m.content for m in history if isinstance(m, UserMessage)] == ["hold first", "after cancel"]


async def test_cancel_during_a_tool_answers_the_call_as_cancelled(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("tool:slow")
    await h.wait_for(sid, has("actions.requested"))
    await asyncio.sleep(0.02)
    assert await h.rt.cancel(sid)
    await h.turns(sid, 1)
    await h.send(sid, "next")
    events = await h.turns(sid, 2)
    await h.stop()
    first_turn = events[: events.index(of_type(events, "session.waiting")[0]) + 1]
    assert types(first_turn)[-2:] == ["turn.cancelled", "session.waiting"]
    assert "action.result" not in types(first_turn)
    tool_messages = [m for m in gate.seen[-1] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1 and tool_messages[0].content.startswith("Cancelled")


async def test_cancel_on_an_idle_session_or_another_turn_does_nothing(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("first")
    before = await h.turns(sid, 1)
    assert await h.rt.cancel(sid)
    assert await h.rt.cancel(sid, "turn_0")
    await h.send(sid, "hold second")
    await h.wait_for(sid, has("step.started", 2))
    assert await h.rt.cancel(sid, "turn_0")  # an older turn: a no-op
    await asyncio.sleep(0.05)
    assert "turn.cancelled" not in types(await h.events(sid))
    gate.hold.set()
    events = await h.turns(sid, 2)
    await h.stop()
    assert events[: len(before)] == before
    assert "turn.cancelled" not in types(events)
    assert last_reply(events) == "echo: hold second"


async def test_cancel_of_an_unknown_session(harness: Harness) -> None:
    assert await harness.rt.cancel("wrun_01AAAAAAAAAAAAAAAAAAAAAAAA") is False


def auth(person: str) -> dict[str, str]:
    return {"authenticator": "people", "principalId": person, "principalType": "user"}


async def test_only_the_turns_own_caller_steers_a_running_turn(gated: tuple[Harness, Gated]) -> None:
    h, gate = gated
    sid = await h.create("hold first", auth=auth("alice"))
    await h.wait_for(sid, has("step.started"))
    bobs = await h.send(sid, "from bob", auth=auth("bob"))  # steer is the default policy
    alices = await h.send(sid, "from alice", auth=auth("alice"))
    events = await h.turns(sid, 2)
    await h.stop()
    received = [(e["data"]["message"], e["data"]["turnId"]) for e in of_type(events, "message.received")]
    assert received == [("hold first", "turn_0"), ("from alice", "turn_0"), ("from bob", "turn_1")]
    assert alices in of_type(events, "message.received")[1]["meta"]["deliveryIds"]
    assert bobs in of_type(events, "message.received")[2]["meta"]["deliveryIds"]
    assert last_reply(events) == "echo: from bob"
