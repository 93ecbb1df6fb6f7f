"""`Conversation`: events recorded from the real runtime (and a few written by hand) folded into state."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from eve_runtime.client import Conversation, Message, Reasoning, ToolCall, Usage

Recordings = dict[str, list[dict[str, Any]]]
_ids = itertools.count()


def event(kind: str, /, turn: str = "turn_0", step: int | None = 0, **data: Any) -> dict[str, Any]:
    """A hand-written event (for what the test model never produces: reasoning, clears, retried steps)."""
    body: dict[str, Any] = {"turnId": turn, "sequence": 0, **data}
    if step is not None:
        body["stepIndex"] = step
    return {"type": kind, "data": body, "meta": {"id": f"evt_{next(_ids):026d}", "at": "2026-01-01T00:00:00.000Z"}}


def test_an_echo_turn(recordings: Recordings) -> None:
    conversation = Conversation.from_events(recordings["echo"])
    assert [(m.role, m.text, m.state) for m in conversation.messages] == [
        ("user", "hello there", "completed"),
        ("assistant", "echo: hello there", "completed"),
    ]
    assert conversation.status == "idle"
    assert conversation.turns == 1 and conversation.turn_id == "turn_0"
    assert conversation.reply() == "echo: hello there"
    waiting = recordings["echo"][-1]["data"]["usage"]
    assert conversation.usage == Usage.from_wire(waiting)
    assert conversation.usage.input_tokens > 0 and conversation.usage.cost_usd is None
    assert conversation.event_count == len(recordings["echo"])


def test_a_tool_call_with_narration(recordings: Recordings) -> None:
    conversation = Conversation.from_events(recordings["tool"])
    kinds = [type(item).__name__ for item in conversation.items]
    assert kinds == ["Message", "Message", "ToolCall", "Message"]
    narration = conversation.messages[1]
    assert narration.text == "Checking." and narration.narration
    call = conversation.tool_calls["call_0_0"]
    assert call.name == "get_weather" and call.kind == "tool-call"
    assert call.input == {"city": "Paris"} and call.input_text == '{"city":"Paris"}'
    assert call.state == "completed"
    assert call.output == {"city": "Paris", "condition": "Sunny", "temperatureF": 72}
    assert conversation.reply() == 'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}'


def test_tool_input_streams_before_it_is_requested(recordings: Recordings) -> None:
    events = recordings["tool"]
    upto = next(i for i, e in enumerate(events) if e["type"] == "action.input.appended")
    call = Conversation.from_events(events[: upto + 1]).tool_calls["call_0_0"]
    assert call.state == "input-streaming" and call.input is None and call.input_text == '{"city":"Paris"}'


def test_an_approval_is_pending_until_answered(recordings: Recordings) -> None:
    waiting = Conversation.from_events(recordings["approval-waiting"])
    assert waiting.status == "waiting-on-input"
    (request,) = waiting.pending.values()
    assert request.kind == "tool-approval" and request.option_ids == ["approve", "cancel"]
    assert request.call_id == "call_0_0" and request.tool_name == "send_alert" and request.task_id is None
    call = waiting.tool_calls["call_0_0"]
    assert (call.state, call.approval, call.request_id) == ("input-available", "pending", request.request_id)

    approved = Conversation.from_events(recordings["approval-approved"])
    assert approved.pending == {} and approved.status == "idle"
    call = approved.tool_calls["call_0_0"]
    assert (call.state, call.approval) == ("completed", "approved")
    assert call.output == {"city": "Paris", "message": "Storm tonight", "sent": True}


def test_a_refused_approval_rejects_the_call(recordings: Recordings) -> None:
    call = Conversation.from_events(recordings["approval-refused"]).tool_calls["call_0_0"]
    assert (call.state, call.approval) == ("rejected", "denied")
    assert call.error == {"code": "TOOL_EXECUTION_DENIED", "message": "Tool execution was denied."}


def test_a_subagent_task(recordings: Recordings) -> None:
    events = recordings["subagent"]
    upto = next(i for i, e in enumerate(events) if e["type"] == "turn.waiting")
    working = Conversation.from_events(events[: upto + 1])
    assert working.status == "waiting-on-tasks"
    (task,) = working.tasks.values()
    assert (task.name, task.kind, task.status, task.call_id) == ("forecaster", "agent", "working", "call_0_0")
    assert task.child_session_id is not None and task.child_session_id.startswith("wrun_")
    assert task.stream_path == f"/eve/v1/session/{task.child_session_id}/stream"
    assert working.tool_calls["call_0_0"].task_id == task.task_id
    assert working.tool_calls["call_0_0"].kind == "subagent-call"

    done = Conversation.from_events(events)
    (task,) = done.tasks.values()
    assert task.status == "completed" and "forecaster" in str(task.output)
    assert done.status == "idle"


def test_a_failed_turn(recordings: Recordings) -> None:
    conversation = Conversation.from_events(recordings["failed"])
    assert conversation.error is not None
    assert (conversation.error.code, conversation.error.message) == ("MODEL_CALL_FAILED", "the provider is down")
    assert not conversation.error.terminal
    assert conversation.status == "idle" and conversation.reply() is None


def test_a_cancelled_turn_interrupts_its_output(recordings: Recordings) -> None:
    conversation = Conversation.from_events(recordings["cancelled"])
    (reply,) = [m for m in conversation.messages if m.role == "assistant"]
    assert reply.state == "interrupted" and reply.text.startswith("one")
    assert conversation.reply() is None
    assert conversation.status == "idle"


def test_an_output_schema_result(recordings: Recordings) -> None:
    conversation = Conversation.from_events(recordings["schema"])
    assert conversation.result == {"city": "Paris"}


def test_a_reset_ends_the_session(recordings: Recordings) -> None:
    assert Conversation.from_events(recordings["reset"]).status == "ended"


def test_two_turns(recordings: Recordings) -> None:
    conversation = Conversation.from_events(recordings["two-turns"])
    assert [m.text for m in conversation.messages] == [
        "first question",
        "echo: first question",
        "second question",
        "echo: second question",
    ]
    assert conversation.turns == 2 and conversation.turn_id == "turn_1"
    assert conversation.reply("turn_0") == "echo: first question"


@pytest.mark.parametrize("name", ["echo", "tool", "approval-approved", "subagent", "two-turns", "cancelled"])
def test_duplicates_and_replays_change_nothing(recordings: Recordings, name: str) -> None:
    events = recordings[name]
    once = Conversation.from_events(events)
    replayed = Conversation.from_events([*events, *events[: len(events) // 2], *copy.deepcopy(events)])
    assert replayed.items == once.items and replayed.usage == once.usage and replayed.status == once.status
    assert replayed.event_count == once.event_count


@pytest.mark.parametrize("name", ["tool", "approval-approved", "subagent"])
def test_the_fold_is_deterministic_at_every_prefix(recordings: Recordings, name: str) -> None:
    events = recordings[name]
    live = Conversation()
    for count, item in enumerate(events, 1):
        live.apply(item)
        again = Conversation.from_events(events[:count])
        assert (live.items, live.pending, live.tasks, live.status) == (
            again.items,
            again.pending,
            again.tasks,
            again.status,
        )


def test_usage_adds_steps_to_the_last_reported_total() -> None:
    conversation = Conversation.from_events(
        [
            event("turn.started", step=None),
            event("step.completed", usage={"inputTokens": 10, "outputTokens": 2, "costUsd": 0.5}),
            event("turn.waiting", step=None, on="tasks", usage={"inputTokens": 100, "outputTokens": 20}),
            event("step.completed", step=1, usage={"inputTokens": 5, "outputTokens": 1, "cacheReadTokens": 3}),
        ]
    )
    assert conversation.usage == Usage(input_tokens=105, output_tokens=21, cache_read_tokens=3)
    assert conversation.status == "waiting-on-tasks"


def test_reasoning_is_kept_apart_from_messages() -> None:
    conversation = Conversation.from_events(
        [
            event("turn.started", step=None),
            event("step.started"),
            event("reasoning.appended", reasoningDelta="Let me "),
            event("reasoning.appended", reasoningDelta="think."),
            event("reasoning.completed", reasoning="Let me think."),
            event("message.appended", messageDelta="Hi"),
            event("message.completed", message="Hi!", finishReason="stop"),
        ]
    )
    assert conversation.reasoning == [Reasoning("Let me think.", "turn_0", 0, "completed")]
    assert conversation.messages == [Message("assistant", "Hi!", "turn_0", 0, "completed", "stop")]


def test_a_retried_step_interrupts_the_partial_text_of_its_first_attempt() -> None:
    conversation = Conversation.from_events(
        [
            event("step.started"),
            event("message.appended", messageDelta="Half an ans"),
            event("step.started"),  # the step runs again (after a crash, or a provider retry)
            event("message.appended", messageDelta="A full answer."),
            event("message.completed", message="A full answer.", finishReason="stop"),
        ]
    )
    assert [(m.text, m.state) for m in conversation.messages] == [
        ("Half an ans", "interrupted"),
        ("A full answer.", "completed"),
    ]


def test_partials_then_a_failed_result() -> None:
    conversation = Conversation.from_events(
        [
            event("actions.requested", actions=[{"kind": "tool-call", "callId": "c1", "toolName": "t", "input": {}}]),
            event("action.partial", result={"kind": "tool-result", "callId": "c1", "toolName": "t", "output": 1}),
            event("action.partial", result={"kind": "tool-result", "callId": "c1", "toolName": "t", "output": 2}),
        ]
    )
    call = conversation.tool_calls["c1"]
    assert (call.state, call.partial) == ("output-partial", 2)
    conversation.apply(
        event(
            "action.result",
            result={"kind": "tool-result", "callId": "c1", "toolName": "t", "output": "boom", "isError": True},
            status="failed",
            error={"code": "ACTION_RESULT_FAILED", "message": "boom"},
        )
    )
    assert (call.state, call.output, call.error) == (
        "failed",
        "boom",
        {"code": "ACTION_RESULT_FAILED", "message": "boom"},
    )


def test_a_relayed_request_never_marks_a_call_of_this_session() -> None:
    conversation = Conversation.from_events(
        [
            event(
                "actions.requested", actions=[{"kind": "tool-call", "callId": "call_0_0", "toolName": "t", "input": {}}]
            ),
            event(
                "input.requested",
                taskId="forecaster-1",
                requests=[
                    {
                        "requestId": "r1",
                        "kind": "tool-approval",
                        "action": {"callId": "call_0_0", "toolName": "child_tool"},
                        "options": [{"id": "approve"}],
                    }
                ],
            ),
        ]
    )
    assert conversation.pending["r1"].task_id == "forecaster-1"
    assert conversation.tool_calls["call_0_0"].approval is None


def test_a_clear_starts_the_conversation_over() -> None:
    conversation = Conversation.from_events(
        [
            event("message.received", step=None, message="secret"),
            event("actions.requested", actions=[{"kind": "tool-call", "callId": "c1", "toolName": "t", "input": {}}]),
            event("context.cleared", step=None, sessionId="wrun_x"),
            event("session.waiting", step=None),
            event("message.received", turn="turn_1", step=None, message="fresh"),
        ]
    )
    assert [m.text for m in conversation.messages] == ["fresh"]
    assert conversation.tool_calls == {}


def test_task_results_of_older_streams_are_not_user_messages() -> None:
    conversation = Conversation.from_events(
        [event("message.received", step=None, message="[task]", kind="task.result")]
    )
    assert conversation.messages == []


def test_unknown_events_and_odd_payloads_are_ignored() -> None:
    conversation = Conversation.from_events(
        [
            {"type": "something.new", "data": {"x": 1}, "meta": {"id": "evt_a"}},
            {"type": "actions.requested", "data": {"actions": ["not an object", {"no": "callId"}]}},
            {"type": "input.resolved", "data": {"resolutions": [{"requestId": "unknown"}]}},
            {"type": "message.appended"},
        ]
    )
    assert conversation.tool_calls == {} and conversation.pending == {}
    assert conversation.messages == [Message("assistant", "", None, None, "streaming")]
    assert conversation.event_count == 4
    assert isinstance(Conversation.from_events([]).items, list)
    assert not any(isinstance(item, ToolCall) for item in conversation.items)
