"""A turn's events: the simple reply, tool calls, usage, the envelope."""

from __future__ import annotations

import json
import re

import pytest

from tests.harness import Harness, last_reply, of_type, types

pytestmark = pytest.mark.anyio

EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")


async def test_first_turn_event_sequence(harness: Harness) -> None:
    sid = await harness.create("hello")
    events = await harness.turns(sid, 1)
    assert types(events)[:4] == ["session.started", "turn.started", "message.received", "step.started"]
    tail = [t for t in types(events) if t != "message.appended"]
    assert tail == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    assert "message.appended" in types(events)
    deltas = "".join(e["data"]["messageDelta"] for e in of_type(events, "message.appended"))
    assert deltas == last_reply(events) == "echo: hello"
    started = events[1]["data"]
    assert {k: v for k, v in started.items() if k != "trace"} == {"sequence": 0, "turnId": "turn_0"}
    assert started["trace"]["traceId"] == events[0]["data"]["trace"]["traceId"]  # eve_runtime.telemetry.ids
    received = events[2]["data"]
    assert received == {
        "message": "hello",
        "parts": [{"text": "hello", "type": "text"}],
        "sequence": 0,
        "turnId": "turn_0",
    }
    assert events[0]["data"]["runtime"]["agentName"] == "app"


async def test_envelope_ids_time_and_delivery_ids(harness: Harness) -> None:
    sid = await harness.create("hello")
    events = await harness.turns(sid, 1)
    delivery_ids = {tuple(e["meta"]["deliveryIds"]) for e in events}
    assert len(delivery_ids) == 1 and len(next(iter(delivery_ids))) == 1
    for event in events:
        assert list(event) == ["data", "type", "meta"]
        assert EVENT_ID.match(event["meta"]["id"])
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", event["meta"]["at"])
    assert len({e["meta"]["id"] for e in events}) == len(events)


async def test_second_turn_is_turn_1_and_usage_accumulates(harness: Harness) -> None:
    sid = await harness.create("hello")
    await harness.turns(sid, 1)
    await harness.send(sid, "how are you")
    events = await harness.turns(sid, 2)
    second = events[events.index(of_type(events, "session.waiting")[0]) + 1 :]
    assert types(second)[0] == "turn.started" and second[0]["data"]["turnId"] == "turn_1"
    assert all(e["data"].get("sequence", 1) == 1 for e in second if "sequence" in e["data"])
    steps = [e["data"]["usage"] for e in of_type(events, "step.completed")]
    totals = of_type(events, "session.waiting")[-1]["data"]["usage"]
    assert totals["inputTokens"] == sum(u["inputTokens"] for u in steps)
    assert totals["outputTokens"] == sum(u["outputTokens"] for u in steps)
    assert set(totals) == {"cacheReadTokens", "cacheWriteTokens", "inputTokens", "outputTokens"}
    waiting = of_type(events, "session.waiting")[-1]["data"]
    assert waiting["wait"] == "next-user-message" and waiting["continuationToken"] == sid
    assert last_reply(events) == "echo: how are you"


async def test_tool_call_turn(harness: Harness) -> None:
    sid = await harness.create('/call get_weather {"city":"Paris"}')
    events = await harness.turns(sid, 1)
    compact = [t for t in types(events) if t not in ("message.appended", "action.input.appended")]
    assert compact == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "actions.requested",
        "action.result",
        "step.completed",
        "step.started",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    requested = of_type(events, "actions.requested")[0]["data"]
    call_id = requested["actions"][0]["callId"]
    assert requested["actions"] == [
        {"callId": call_id, "input": {"city": "Paris"}, "kind": "tool-call", "toolName": "get_weather"}
    ]
    inputs = [e for e in of_type(events, "action.input.appended") if e["data"]["callId"] == call_id]
    assert inputs and events.index(inputs[-1]) < events.index(of_type(events, "actions.requested")[0])
    assert json.loads("".join(e["data"]["inputTextDelta"] for e in inputs)) == {"city": "Paris"}
    result = of_type(events, "action.result")[0]["data"]
    assert result["status"] == "completed"
    assert result["result"] == {
        "callId": call_id,
        "kind": "tool-result",
        "output": {"city": "Paris", "condition": "Sunny", "temperatureF": 72},
        "toolName": "get_weather",
    }
    first_step, second_step = of_type(events, "step.completed")
    assert first_step["data"]["finishReason"] == "tool-calls" and second_step["data"]["stepIndex"] == 1
    assert last_reply(events) == 'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}'


async def test_parallel_calls_are_split_and_answered_in_order(harness: Harness) -> None:
    sid = await harness.create('/call get_weather {"city":"Paris"}\n/call get_weather {"city":"Oslo"}')
    events = await harness.turns(sid, 1)
    assert len(of_type(events, "actions.requested")) == 2
    assert len(of_type(events, "action.result")) == 2
    first_request = events.index(of_type(events, "actions.requested")[0])
    assert all(events.index(e) < first_request for e in of_type(events, "action.input.appended"))
    assert last_reply(events).splitlines() == [
        'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}',
        'get_weather -> {"city":"Oslo","condition":"Sunny","temperatureF":72}',
    ]


async def test_narration_before_tool_calls_is_a_tool_calls_message(harness: Harness) -> None:
    sid = await harness.create('/say Let me check.\n/call get_weather {"city":"Rome"}')
    events = await harness.turns(sid, 1)
    completed = of_type(events, "message.completed")
    assert completed[0]["data"]["finishReason"] == "tool-calls"
    assert completed[0]["data"]["message"] == "Let me check."
    assert completed[-1]["data"]["finishReason"] == "stop"


async def test_a_tool_step_without_narration_has_no_tool_calls_message(harness: Harness) -> None:
    sid = await harness.create('/call get_weather {"city":"Rome"}')
    events = await harness.turns(sid, 1)
    assert [e["data"]["finishReason"] for e in of_type(events, "message.completed")] == ["stop"]
