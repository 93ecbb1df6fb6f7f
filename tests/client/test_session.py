"""`EveClient.session()`: one turn at a time, streamed as text deltas and typed events, against a real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eve_runtime.client import (
    ActionResult,
    EveClient,
    InputRequested,
    MessageAppended,
    ResponseError,
    SessionStarted,
    SessionWaiting,
    StepCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
)
from tests.client.recordings import ALERT
from tests.server.support import LiveServer

SLOW = "/delay 50\n/reply one two three four five six"
WEATHER = '{"city":"Paris","condition":"Sunny","temperatureF":72}'


@pytest.fixture
def eve(server: LiveServer) -> Iterator[EveClient]:
    with EveClient(server.url) as client:
        yield client


def test_a_turn_streams_its_text_then_ends_with_its_result_and_usage(eve: EveClient) -> None:
    session = eve.session()
    turn = session.send(SLOW)
    assert session.id is not None and turn.session_id == session.id
    deltas = list(turn.text())
    assert len(deltas) > 1 and "".join(deltas) == "one two three four five six"
    assert turn.done  # the deltas stopped at the turn's end: nothing left to wait for
    result = turn.result()
    assert (result.status, result.reply, result.turn_id) == ("completed", "one two three four five six", "turn_0")
    assert result.events[-1]["type"] == "session.waiting" and result.next_index == eve.event_count(session.id)
    steps = [e["data"]["usage"] for e in result.events if e["type"] == "step.completed"]
    assert turn.usage == result.turn_usage == sum((Usage.from_wire(u) for u in steps), Usage())
    assert turn.usage.output_tokens > 0 and turn.usage.input_tokens > 0

    follow_up = session.send("again")
    assert follow_up.delivery_id is not None
    assert list(follow_up.text()) == ["echo: again"]
    second = follow_up.result()
    assert (second.turn_id, second.reply) == ("turn_1", "echo: again")
    assert follow_up.usage.input_tokens > 0
    assert second.usage.input_tokens == result.usage.input_tokens + follow_up.usage.input_tokens  # session total


def test_typed_events_of_a_tool_turn(eve: EveClient) -> None:
    turn = eve.session().send('/say Checking.\n/call get_weather {"city": "Paris"}')
    events = list(turn)
    assert [type(e).__name__ for e in events][:2] == ["SessionStarted", "TurnStarted"]
    assert all(e.raw["type"] == e.type and e.id == e.raw["meta"]["id"] for e in events)
    deltas = [e for e in events if isinstance(e, MessageAppended)]
    assert [(d.delta, d.step_index, d.turn_id) for d in deltas] == [
        ("Checking.", 0, "turn_0"),
        (f"get_weather -> {WEATHER}", 1, "turn_0"),
    ]
    (call,) = [e for e in events if isinstance(e, ActionResult)]
    assert (call.tool_name, call.status, call.output, call.error) == (
        "get_weather",
        "completed",
        {"city": "Paris", "condition": "Sunny", "temperatureF": 72},
        None,
    )
    assert sum(isinstance(e, StepCompleted) for e in events) == 2
    last = events[-1]
    assert isinstance(last, SessionWaiting) and last.usage is not None and last.usage.output_tokens > 0
    assert list(turn) == [] and turn.result().reply == f"get_weather -> {WEATHER}"  # one pass


def test_an_approval_ends_the_turn_and_approve_continues_it(eve: EveClient) -> None:
    session = eve.session()
    waiting = session.send(ALERT)
    assert list(waiting.text()) == []
    paused = waiting.result()
    assert paused.status == "waiting-for-input"
    (request,) = paused.pending
    assert request.option_ids == ["approve", "cancel"]
    asked = [e for e in session.events() if isinstance(e, InputRequested)]
    assert [r.request_id for r in asked[0].requests] == [request.request_id]

    approved = session.approve(request)
    assert list(approved.text()) == ['send_alert -> {"city":"Paris","message":"Storm tonight","sent":true}']
    assert approved.result().status == "completed" and approved.usage.output_tokens > 0

    refused = session.send(ALERT)
    denied = session.deny(refused.result().pending[0])
    assert denied.result().reply == 'send_alert -> "Tool execution was denied."'


def test_breaking_out_and_reading_on(eve: EveClient) -> None:
    with eve.session().send(SLOW) as turn:
        for delta in turn.text():
            assert delta == "one "
            break
        assert not turn.done
        assert "".join(turn.text()) == "two three four five six"
        assert turn.result().reply == "one two three four five six"


def test_a_message_queued_behind_a_running_turn_streams_its_own_turn(eve: EveClient) -> None:
    session = eve.session()
    running = session.send(SLOW)
    queued = session.send("next", turn_policy="queue")
    assert list(queued.text()) == ["echo: next"]  # not the running turn's text
    assert queued.result().turn_id == "turn_1"
    assert running.result().reply == "one two three four five six"


def test_a_failed_turn_and_a_refused_send(eve: EveClient) -> None:
    session = eve.session()
    failing = session.send("/fail the provider is down")
    events = list(failing)
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert failed and failed[0].error is not None and failed[0].error.code == "MODEL_CALL_FAILED"
    result = failing.result()
    assert result.status == "failed" and result.error == failed[0].error

    assert session.reset() == "reset"
    with pytest.raises(ResponseError) as refused:
        session.send("still there?")
    assert (refused.value.status, refused.value.code) == (409, "session_not_active")
    with pytest.raises(ValueError, match="send"):
        eve.session().approve("aitxt-none")


def test_an_existing_session_by_id(eve: EveClient) -> None:
    session_id = eve.create("hello")
    eve.result(session_id)
    session = eve.session(session_id)
    events = session.events()
    assert isinstance(events[0], SessionStarted) and isinstance(events[1], TurnStarted)
    assert [e.raw for e in events] == eve.events(session_id)
    assert list(session.send("bye").text()) == ["echo: bye"]
