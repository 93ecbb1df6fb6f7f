"""The transcript the terminal UI prints for a session's events."""

from __future__ import annotations

import re
from typing import Any

from eve_cli.tui.feed import Feed, request_lines
from eve_runtime.client import Conversation, InputRequest

_ids = iter(range(1_000_000))


def event(type_: str, **data: Any) -> dict[str, Any]:
    return {"type": type_, "data": {"turnId": "turn_0", "stepIndex": 0, **data}, "meta": {"id": f"evt_{next(_ids)}"}}


def plain(lines: list[str]) -> list[str]:
    return [re.sub(r"\[/?[a-z ]*\]", "", line) for line in lines]


def feed_of(*events: dict[str, Any]) -> tuple[Feed, list[str]]:
    feed = Feed(Conversation(), clock=lambda: 10.0)
    printed: list[str] = []
    for item in events:
        printed += plain(feed.push(item))
    return feed, printed


def test_a_reply_prints_line_by_line_as_it_streams() -> None:
    feed = Feed(Conversation())
    feed.push(event("turn.started"))
    assert feed.push(event("message.appended", messageDelta="Hello")) == []
    assert feed.live == "Hello" and feed.activity == "Generating" and feed.busy
    assert plain(feed.push(event("message.appended", messageDelta=" world\nsecond"))) == ["● Hello world"]
    assert feed.live == "second"
    assert plain(feed.push(event("message.completed", message="Hello world\nsecond", finishReason="stop"))) == [
        "  second"
    ]
    assert feed.live == ""


def test_a_reply_that_never_streamed_prints_whole() -> None:
    _feed, printed = feed_of(event("message.completed", message="one\ntwo", finishReason="stop"))
    assert printed == ["● one", "  two"]


def test_tool_calls_are_one_line_each_with_their_result() -> None:
    _feed, printed = feed_of(
        event("turn.started"),
        event("actions.requested", actions=[{"callId": "c1", "toolName": "get_weather", "input": {"city": "Rome"}}]),
        event("action.result", status="completed", result={"callId": "c1", "toolName": "get_weather", "output": 21}),
        event("action.result", status="failed", error={"message": "boom"}, result={"callId": "c2", "toolName": "x"}),
    )
    assert printed == ['▸ get_weather {"city":"Rome"}', "  ↳ 21", "  ↳ failed: boom"]


def test_a_skill_load_is_named_after_its_skill() -> None:
    action = {"callId": "c1", "kind": "load-skill", "name": "plan_a_trip", "input": {"skill": "plan_a_trip"}}
    result = {"callId": "c1", "kind": "load-skill-result", "name": "plan_a_trip", "output": "# Plan"}
    _feed, printed = feed_of(
        event("turn.started"),
        event("actions.requested", actions=[action]),
        event("action.result", status="completed", result=result),
    )
    assert printed == ['▸ plan_a_trip (skill) {"skill":"plan_a_trip"}', "  ↳ # Plan"]


def test_reasoning_is_collapsed_to_one_line() -> None:
    feed, printed = feed_of(
        event("reasoning.appended", reasoningDelta="hmm"), event("reasoning.completed", reasoning="a\nb c")
    )
    assert printed == ["▸ thought: a b c"]


def test_messages_typed_here_are_not_printed_twice() -> None:
    feed = Feed(Conversation())
    feed.sent("hi")
    assert feed.busy and feed.activity == "Sending"
    assert feed.push(event("message.received", message="hi")) == []
    assert plain(feed.push(event("message.received", message="from elsewhere"))) == ["› from elsewhere"]
    feed.push(event("turn.started"))
    assert not feed.sending


def test_a_request_is_asked_inline_and_its_outcome_shown() -> None:
    request = {
        "requestId": "r1",
        "kind": "tool-approval",
        "prompt": "Approve Send alert?",
        "options": [{"id": "approve", "label": "Approve"}, {"id": "cancel", "label": "Cancel"}],
        "action": {"callId": "c1", "toolName": "send_alert", "input": {"city": "Oslo"}},
    }
    feed, printed = feed_of(event("turn.started"), event("input.requested", requests=[request]))
    assert printed == [
        "? Approve Send alert?",
        '  send_alert {"city":"Oslo"}',
        "  1) Approve  2) Deny  (type y or n, or a number)",  # the wire says cancel/Cancel
    ]
    assert feed.activity == "Waiting for your answer"
    assert plain(feed.push(event("input.resolved", resolutions=[{"requestId": "r1", "outcome": "approved"}]))) == [
        "  approved"
    ]


def test_a_relayed_question_names_its_task_and_accepts_free_text() -> None:
    request = InputRequest.from_wire(
        {"requestId": "q", "kind": "question", "prompt": "Which city?", "allowFreeform": True}, {"taskId": "t1"}
    )
    assert plain(request_lines(request)) == ["? Which city? (from task t1)", "  (type your answer)"]


def test_turn_endings() -> None:
    _feed, done = feed_of(event("turn.started"), event("turn.completed"))
    assert done == ["  this turn: 0 in / 0 out tokens · 0 in / 0 out in this session"]
    _feed, failed = feed_of(event("turn.started"), event("turn.failed", code="MODEL_ERROR", message="nope"))
    assert failed == ["✗ the turn failed: MODEL_ERROR: nope"]
    feed, cancelled = feed_of(
        event("turn.started"), event("message.appended", messageDelta="par"), event("turn.cancelled")
    )
    assert cancelled == ["● par", "■ cancelled"] and feed.activity is None and not feed.busy


def test_token_counts_are_the_turns_and_move_while_text_streams() -> None:
    feed, _printed = feed_of(
        event("session.waiting", usage={"inputTokens": 100, "outputTokens": 50}),  # the turns before
        event("turn.started"),
    )
    assert feed.turn_tokens() == "0 output tokens"
    feed.push(event("message.appended", messageDelta="Hello, w"))
    assert feed.turn_tokens() == "~2 output tokens"  # estimated while the step streams
    feed.push(event("message.appended", messageDelta="orld! How are you?"))
    assert feed.turn_tokens() == "~7 output tokens"
    feed.push(event("step.completed", usage={"inputTokens": 10, "outputTokens": 6, "costUsd": 0.002}))
    assert feed.turn_tokens() == "6 output tokens"  # the step reported: its real count
    footer = plain(feed.push(event("turn.completed")))[-1]
    assert footer == "  this turn: 10 in / 6 out tokens, $0.0020 · 110 in / 56 out in this session"


def test_tasks_show_when_they_start_and_settle() -> None:
    feed, printed = feed_of(
        event("turn.started"),
        event("task.started", taskId="t1", name="forecaster", kind="agent"),
        event("turn.waiting", on="tasks"),
    )
    assert printed == ["  ◆ forecaster working in the background (t1)"]
    assert feed.activity == "Waiting on forecaster"
    assert plain(feed.push(event("task.settled", taskId="t1", status="completed", output="sunny"))) == [
        "  ◆ forecaster completed sunny"
    ]


def test_a_message_the_server_refused_stops_showing_sending() -> None:
    feed = Feed(Conversation())
    feed.sent("hi")
    feed.unsent("hi")
    assert not feed.busy and feed.activity is None
    assert plain(feed.push(event("message.received", message="hi"))) == ["› hi"]  # sent again elsewhere: shown


def test_duplicates_print_nothing() -> None:
    feed = Feed(Conversation())
    once = event("message.completed", message="x", finishReason="stop")
    assert feed.push(once) and feed.push(once) == []


def test_a_call_closed_by_recovery_prints_as_abandoned() -> None:
    message = "This call was interrupted before its result was recorded, and it was not run again."
    _feed, printed = feed_of(
        event("actions.requested", actions=[{"callId": "c1", "toolName": "slow", "input": {}}]),
        event(
            "action.result",
            status="failed",
            error={"code": "ACTION_ABANDONED", "message": message},
            result={"callId": "c1", "toolName": "slow", "output": message, "isError": True},
        ),
    )
    assert printed == ["▸ slow {}", f"  ↳ abandoned: {message}"]


def test_a_tool_that_raised_names_its_error_and_points_to_its_traceback() -> None:
    _feed, printed = feed_of(
        event(
            "action.result",
            status="failed",
            error={"code": "ACTION_RESULT_FAILED", "message": "no weather for Oslo"},
            result={"callId": "c1", "toolName": "explode", "errorName": "ValueError", "isError": True},
        )
    )
    assert printed == ["  ↳ failed: ValueError: no weather for Oslo (/trace shows where)"]


def test_a_retry_prints_its_reason_and_when_it_runs() -> None:
    retrying = event(
        "step.retrying", attempt=2, maxAttempts=4, delayMs=1234, code="MODEL_CALL_FAILED", message="HTTP 429: slow"
    )
    feed, printed = feed_of(event("turn.started"), retrying)
    assert printed == ["↻ retrying 2/4 in 1.2 s: HTTP 429: slow"]
    assert feed.activity == "Retrying 2/4" and feed.busy
