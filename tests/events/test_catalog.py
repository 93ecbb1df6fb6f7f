"""The event catalogue: every type named once, one constructor per emitted type, wire data in eve's order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from eve_runtime.checkpoint import ParentLink, TaskState, UsageTotals
from eve_runtime.events import actions, extensions, tasks, turns
from eve_runtime.events.catalog import EVENT_TYPES, EXTENSION_EVENT_TYPES, CallAt, StepAt, StreamEvent, TaskAt, TurnAt
from eve_runtime.events.usage import add_call, add_reported, call_usage_of, call_usage_wire, report_wire, totals_wire
from eve_runtime.messages import ToolCall
from eve_runtime.models.base import Usage
from eve_runtime.outcomes import cancelled_outcome, failed_outcome

TURN = TurnAt(3, "turn_3")
STEP = TURN.step(1)
CALL = STEP.call("call_1")
TASK = TaskState(
    task_id="t-1",
    name="researcher",
    node_id="subagents/researcher",
    child_session_id="wrun_c",
    call_id="c9",
    turn_id="turn_3",
)
TOTALS = UsageTotals(input_tokens=10, output_tokens=4)


def _constructors() -> list[type[StreamEvent]]:
    found = []
    for module in (turns, actions, tasks):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, StreamEvent):
                found.append(value)
    return found


def test_every_type_is_named_once() -> None:
    assert len(EVENT_TYPES) == len(set(EVENT_TYPES)) == 34


def test_the_extensions_are_not_eve_types() -> None:
    assert EXTENSION_EVENT_TYPES == ("step.retrying",)
    assert not set(EXTENSION_EVENT_TYPES) & set(EVENT_TYPES)


def test_every_constructor_builds_a_catalogued_type_and_only_one_builds_each() -> None:
    types = [constructor.type for constructor in _constructors()]
    assert set(types) <= set(EVENT_TYPES) | set(EXTENSION_EVENT_TYPES)
    assert len(types) == len(set(types))
    assert set(EVENT_TYPES) - set(types) == {
        "approval.candidate",
        "authorization.required",
        "authorization.completed",
    }


def line(event: StreamEvent) -> str:
    return json.dumps([event.type, event.wire()], separators=(",", ":"))


CASES: list[tuple[StreamEvent, str]] = [
    (
        turns.SessionStarted(
            {"agentId": "a"},
            "wrun_old",
            ParentLink(session_id="p", task_id="t", name="n", call_id="c", turn_id="turn_0"),
        ),
        '["session.started",{"runtime":{"agentId":"a"},"predecessor":{"sessionId":"wrun_old"},"invocation":'
        '{"kind":"subagent","name":"n","parentCallId":"c","parentSessionId":"p","parentTurnId":"turn_0"}}]',
    ),
    (
        turns.SessionWaiting("wrun_1", TOTALS),
        '["session.waiting",{"continuationToken":"wrun_1","usage":{"cacheReadTokens":0,"cacheWriteTokens":0,'
        '"inputTokens":10,"outputTokens":4},"wait":"next-user-message"}]',
    ),
    (turns.SessionCompleted(), '["session.completed",{}]'),
    (
        turns.SessionFailed("wrun_1", "session_stranded", "gone", {"trigger": "timeout"}),
        '["session.failed",{"code":"session_stranded","message":"gone","details":{"trigger":"timeout"},'
        '"sessionId":"wrun_1"}]',
    ),
    (
        turns.SessionFailed("wrun_1", "MODEL_CALL_FAILED", "no key", None, TOTALS),
        '["session.failed",{"code":"MODEL_CALL_FAILED","message":"no key","sessionId":"wrun_1","usage":'
        '{"cacheReadTokens":0,"cacheWriteTokens":0,"inputTokens":10,"outputTokens":4}}]',
    ),
    (
        turns.MessageReceived(TURN, "hi", []),
        '["message.received",{"message":"hi","parts":[],"sequence":3,"turnId":"turn_3"}]',
    ),
    (
        turns.TurnFailed(TURN, "X", "broke", {"a": 1}),
        '["turn.failed",{"code":"X","message":"broke","details":{"a":1},"sequence":3,"terminal":false,"turnId":"turn_3"}]',
    ),
    (
        turns.TurnFailed(TURN, "X", "broke", terminal=True),
        '["turn.failed",{"code":"X","message":"broke","sequence":3,"terminal":true,"turnId":"turn_3"}]',
    ),
    (
        turns.TurnWaiting(TURN, "tasks", UsageTotals(cost_usd=0.5)),
        '["turn.waiting",{"on":"tasks","sequence":3,"turnId":"turn_3","usage":{"cacheReadTokens":0,'
        '"cacheWriteTokens":0,"inputTokens":0,"outputTokens":0,"costUsd":0.5}}]',
    ),
    (
        turns.StepCompleted(STEP, "stop", Usage(input_tokens=5, output_tokens=2, cache_write_tokens=1), 0.25),
        '["step.completed",{"finishReason":"stop","sequence":3,"stepIndex":1,"turnId":"turn_3","usage":'
        '{"inputTokens":5,"outputTokens":2,"cacheReadTokens":0,"cacheWriteTokens":1,"costUsd":0.25}}]',
    ),
    (
        turns.StepCompleted(STEP, "other"),
        '["step.completed",{"finishReason":"other","sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        extensions.StepRetrying(
            STEP, 2, 4, 1.2345, "MODEL_CALL_FAILED", "slow down", {"semanticErrorId": "model-rate-limited"}
        ),
        '["step.retrying",{"attempt":2,"code":"MODEL_CALL_FAILED","delayMs":1234,"details":{"semanticErrorId":'
        '"model-rate-limited"},"maxAttempts":4,"message":"slow down","sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        turns.CompactionRequested(STEP, "wrun_1", "test", 12.5),
        '["compaction.requested",{"modelId":"test","sequence":3,"sessionId":"wrun_1","stepIndex":1,"turnId":"turn_3",'
        '"usageInputTokens":12.5}]',
    ),
    (turns.ContextCleared(TURN, "wrun_1"), '["context.cleared",{"sequence":3,"sessionId":"wrun_1","turnId":"turn_3"}]'),
    (
        actions.ActionInputAppended(STEP, "c1", '{"a', "get_weather"),
        '["action.input.appended",{"callId":"c1","inputTextDelta":"{\\"a","sequence":3,"stepIndex":1,"turnId":"turn_3",'
        '"toolName":"get_weather"}]',
    ),
    (
        actions.ActionPartial(CALL, "deploy", {"status": "sleeping"}),
        '["action.partial",{"result":{"callId":"call_1","kind":"tool-result","output":{"status":"sleeping"},'
        '"toolName":"deploy"},"sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        actions.ActionResult(
            STEP, failed_outcome(ToolCall(id="c1", name="f", arguments={}), "E", "no", name="ValueError")
        ),
        '["action.result",{"result":{"callId":"c1","kind":"tool-result","output":"no","toolName":"f","errorName":'
        '"ValueError","isError":true},"status":"failed","error":{"code":"E","message":"no","name":"ValueError"},'
        '"sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        actions.ActionResult(STEP, cancelled_outcome(ToolCall(id="c1", name="f", arguments={}))),
        '["action.result",{"result":{"callId":"c1","kind":"tool-result","output":"The call was cancelled before it '
        'finished.","toolName":"f","isError":true},"status":"failed","error":{"code":"CANCELLED","message":"The call '
        'was cancelled before it finished."},"sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        actions.InputRequested(CALL, [{"requestId": "r"}]),
        '["input.requested",{"callId":"call_1","requests":[{"requestId":"r"}],"sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        actions.InputResolved(CALL, [{"requestId": "r"}]),
        '["input.resolved",{"resolutions":[{"requestId":"r"}],"callId":"call_1","sequence":3,"stepIndex":1,"turnId":"turn_3"}]',
    ),
    (
        actions.InputResolved(TaskAt("c9", 3, "t-1", "turn_3"), [], withdrawn=True),
        '["input.resolved",{"callId":"c9","resolutions":[],"sequence":3,"taskId":"t-1","turnId":"turn_3"}]',
    ),
    (
        actions.InputResolved(TaskAt("c9", 3, "t-1", "turn_3"), []),
        '["input.resolved",{"resolutions":[],"callId":"c9","sequence":3,"taskId":"t-1","turnId":"turn_3"}]',
    ),
    (
        tasks.AgentStarted(TASK),
        '["agent.started",{"callId":"c9","turnId":"turn_3","name":"researcher","sessionId":"wrun_c",'
        '"streamPath":"/eve/v1/session/wrun_c/stream","taskId":"t-1"}]',
    ),
    (
        tasks.TaskSettled(TASK, "cancelled", cancel_reason="turn_cancelled"),
        '["task.settled",{"callId":"c9","cancel":{"reason":"turn_cancelled"},"kind":"agent","name":"researcher",'
        '"status":"cancelled","taskId":"t-1","turnId":"turn_3"}]',
    ),
    (
        tasks.TaskSettled(TASK, "failed", error={"code": "TIMED_OUT"}),
        '["task.settled",{"callId":"c9","kind":"agent","name":"researcher","status":"failed","taskId":"t-1",'
        '"turnId":"turn_3","error":{"code":"TIMED_OUT"}}]',
    ),
]


@pytest.mark.parametrize(("event", "expected"), CASES, ids=[f"{e.type}-{i}" for i, (e, _) in enumerate(CASES)])
def test_wire_data_keeps_eves_keys_in_eves_order(event: StreamEvent, expected: str) -> None:
    assert line(event) == expected


def test_call_usage_round_trips_through_its_wire_form() -> None:
    usage = Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2, cache_write_tokens=1)
    assert call_usage_of(call_usage_wire(usage, 0.125)) == (usage, 0.125)


def test_totals_count_calls_and_what_a_child_reported_since_its_last_report() -> None:
    totals = UsageTotals()
    add_call(totals, Usage(input_tokens=10, output_tokens=5), 0.5)
    reported = UsageTotals(input_tokens=4, output_tokens=1, cost_usd=0.25)
    delta = report_wire(totals, reported)
    assert delta == {"inputTokens": 6, "outputTokens": 4, "cacheReadTokens": 0, "cacheWriteTokens": 0, "costUsd": 0.25}
    parent = UsageTotals(input_tokens=1)
    add_reported(parent, delta)
    wire: dict[str, Any] = totals_wire(parent)
    assert wire == {"cacheReadTokens": 0, "cacheWriteTokens": 0, "inputTokens": 7, "outputTokens": 4, "costUsd": 0.25}


def test_places_know_their_turn_and_step() -> None:
    assert STEP == StepAt(3, 1, "turn_3")
    assert CALL == CallAt("call_1", STEP)
    assert STEP.wire() == {"sequence": 3, "stepIndex": 1, "turnId": "turn_3"}
