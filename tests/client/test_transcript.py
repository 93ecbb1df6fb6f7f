"""`transcript_of`: the `{role, text}` conversation of recorded and hand-written event lists."""

from __future__ import annotations

from typing import Any

from eve_runtime.client import transcript_of
from tests.client.test_reducer import event

Recordings = dict[str, list[dict[str, Any]]]


def test_received_messages_and_completed_replies(recordings: Recordings) -> None:
    assert transcript_of(recordings["two-turns"]) == [
        {"role": "user", "text": "first question"},
        {"role": "assistant", "text": "echo: first question"},
        {"role": "user", "text": "second question"},
        {"role": "assistant", "text": "echo: second question"},
    ]


def test_narration_tool_calls_and_results_are_left_out(recordings: Recordings) -> None:
    assert transcript_of(recordings["tool"]) == [
        {"role": "user", "text": '/say Checking.\n/call get_weather {"city": "Paris"}'},
        {"role": "assistant", "text": 'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}'},
    ]


def test_approvals_and_interrupted_output_are_left_out(recordings: Recordings) -> None:
    approved = transcript_of(recordings["approval-approved"])
    assert [m["role"] for m in approved] == ["user", "assistant"]
    assert approved[1]["text"].startswith("send_alert -> ")
    assert transcript_of(recordings["approval-waiting"]) == [approved[0]]
    assert transcript_of(recordings["cancelled"]) == [
        {"role": "user", "text": "/delay 100\n/reply one two three four five six"}
    ]
    assert [m["role"] for m in transcript_of(recordings["failed"])] == ["user"]


def test_reasoning_is_left_out() -> None:
    events = [
        event("message.received", step=None, message="why?"),
        event("reasoning.appended", reasoningDelta="hmm"),
        event("reasoning.completed", reasoning="hmm"),
        event("message.completed", message="because", finishReason="stop"),
    ]
    assert transcript_of(events) == [{"role": "user", "text": "why?"}, {"role": "assistant", "text": "because"}]


def test_a_clear_starts_the_transcript_over() -> None:
    events = [
        event("message.received", step=None, message="my secret"),
        event("message.completed", message="noted", finishReason="stop"),
        event("context.cleared", step=None, sessionId="wrun_x"),
        event("message.received", turn="turn_1", step=None, message="hello again"),
        event("message.completed", turn="turn_1", message="hi", finishReason="stop"),
    ]
    assert transcript_of(events) == [{"role": "user", "text": "hello again"}, {"role": "assistant", "text": "hi"}]


def test_a_reset_that_ended_a_stranded_session_starts_the_transcript_over() -> None:
    def ended(trigger: str) -> dict[str, Any]:
        data = {"code": "session_stranded", "message": "gone", "details": {"trigger": trigger}, "sessionId": "s"}
        return {"type": "session.failed", "data": data}

    asked = {"type": "message.received", "data": {"message": "Bob asks.", "turnId": "turn_0"}}
    assert transcript_of([asked, ended("reset")]) == []
    assert transcript_of([asked, ended("message")]) == [{"role": "user", "text": "Bob asks."}]
    assert transcript_of([asked, ended("timeout")]) == [{"role": "user", "text": "Bob asks."}]


def test_max_messages_keeps_the_newest(recordings: Recordings) -> None:
    full = transcript_of(recordings["two-turns"])
    assert transcript_of(recordings["two-turns"], max_messages=3) == full[1:]
    assert transcript_of(recordings["two-turns"], max_messages=10) == full
    assert transcript_of(recordings["two-turns"], max_messages=0) == []


def test_duplicates_count_once_and_task_results_are_not_user_text(recordings: Recordings) -> None:
    events = recordings["echo"]
    assert transcript_of([*events, *events]) == transcript_of(events)
    task_result = event("message.received", step=None, message="<task_result/>", kind="task.result")
    assert transcript_of([task_result]) == []
    assert transcript_of([]) == []
