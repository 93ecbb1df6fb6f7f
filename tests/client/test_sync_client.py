"""`EveClient` against a real server: every call of the API, results of turns, and errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eve_runtime.client import EveClient, ResponseError, ServerUnreachable
from eve_runtime.project.compiler import CompiledApp
from eve_runtime.server.auth import BearerTokenAuth
from tests.client.recordings import ALERT
from tests.server.support import LiveServer

SLOW = "/delay 100\n/reply one two three four five six"


@pytest.fixture
def eve(server: LiveServer) -> Iterator[EveClient]:
    with EveClient(server.url) as client:
        yield client


def test_health_and_info(eve: EveClient) -> None:
    assert eve.health()["status"] == "ready"
    info = eve.info()
    assert info["kind"] == "eve-agent-info" and info["mode"] == "development"


def test_a_turn_and_a_follow_up(eve: EveClient) -> None:
    session_id = eve.create("hello")
    first = eve.result(session_id)
    assert (first.status, first.reply, first.turn_id) == ("completed", "echo: hello", "turn_0")
    assert first.usage.input_tokens > 0 and first.error is None and first.pending == ()
    assert first.next_index == eve.event_count(session_id) == len(first.events)
    assert first.events[-1]["type"] == "session.waiting"

    delivery_id = eve.send(session_id, "again")
    second = eve.result(session_id, first.next_index, delivery_id=delivery_id)
    assert (second.status, second.reply, second.turn_id) == ("completed", "echo: again", "turn_1")
    assert delivery_id in second.events[0]["meta"]["deliveryIds"]
    assert second.usage.input_tokens > first.usage.input_tokens
    assert [e["meta"]["id"] for e in eve.events(session_id)] == [
        e["meta"]["id"] for e in (*first.events, *second.events)
    ]


def test_the_result_of_a_message_queued_behind_a_running_turn(eve: EveClient) -> None:
    session_id = eve.create(SLOW)
    start = 0
    delivery_id = eve.send(session_id, "next", turn_policy="queue")
    result = eve.result(session_id, start, delivery_id=delivery_id)
    assert (result.reply, result.turn_id) == ("echo: next", "turn_1")  # not the running turn's reply


def test_an_approval_answered_with_respond(eve: EveClient) -> None:
    session_id = eve.create(ALERT)
    waiting = eve.result(session_id)
    assert waiting.status == "waiting-for-input" and waiting.reply is None
    (request,) = waiting.pending
    assert request.kind == "tool-approval" and request.option_ids == ["approve", "cancel"]

    eve.respond(session_id, [{"requestId": request.request_id, "optionId": "approve"}])
    done = eve.result(session_id, waiting.next_index)
    assert (done.status, done.pending, done.turn_id) == ("completed", (), "turn_0")
    assert done.reply == 'send_alert -> {"city":"Paris","message":"Storm tonight","sent":true}'


def test_an_approval_answered_in_plain_text(eve: EveClient) -> None:
    session_id = eve.create(ALERT)
    waiting = eve.result(session_id)
    eve.send(session_id, "approve")
    done = eve.result(session_id, waiting.next_index)
    assert done.status == "completed" and done.reply is not None and done.reply.startswith("send_alert -> ")


def test_cancel(eve: EveClient) -> None:
    session_id = eve.create(SLOW)
    for item in eve.stream(session_id):
        if item["type"] == "message.appended":
            break
    assert eve.cancel(session_id) == "accepted"
    result = eve.result(session_id)
    assert result.status == "cancelled" and result.reply is None and result.error is None
    assert eve.cancel(session_id, turn_id="turn_9") in ("accepted", "no_active_turn")


def test_a_failed_turn(eve: EveClient) -> None:
    result = eve.result(eve.create("/fail the provider is down"))
    assert result.status == "failed" and result.error is not None
    assert (result.error.code, result.error.message) == ("MODEL_CALL_FAILED", "the provider is down")


def test_reset_retires_the_session(eve: EveClient) -> None:
    session_id = eve.create("hello")
    eve.result(session_id)
    assert eve.reset(session_id, reason="done") == "reset"
    assert eve.reset(session_id) == "no_active_session"
    assert eve.cancel(session_id) == "no_active_turn"
    with pytest.raises(ResponseError) as refused:
        eve.send(session_id, "still there?")
    assert (refused.value.status, refused.value.code) == (409, "session_not_active")
    assert refused.value.message == "The session is no longer active."
    assert str(refused.value) == "409 session_not_active: The session is no longer active."
    assert [e["type"] for e in eve.stream(session_id)][-1] == "session.completed"  # a follow ends with the session


def test_output_schema_and_client_context(eve: EveClient) -> None:
    session_id = eve.create()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    delivery_id = eve.send(session_id, '/json {"city": "Paris"}', output_schema=schema, client_context="in a hurry")
    result = eve.result(session_id, delivery_id=delivery_id)
    assert result.status == "completed" and result.data == {"city": "Paris"}


def test_create_once_and_idempotent_sends(eve: EveClient) -> None:
    first = eve.create("hi", operation_id="op-1")
    assert eve.create("hi", operationId="op-1") == first
    eve.result(first)
    delivery = eve.send(first, "again", idempotency_key="key-1")
    assert eve.send(first, "again", idempotency_key="key-1") == delivery


def test_a_parked_session_has_no_events(eve: EveClient) -> None:
    session_id = eve.create()
    assert eve.event_count(session_id) == 0
    assert eve.events(session_id) == []


def test_errors_carry_status_code_and_message(eve: EveClient) -> None:
    with pytest.raises(ResponseError) as bad:
        eve.create("hi", turnPolicy="sideways")
    assert (bad.value.status, bad.value.message) == (400, "Expected 'turnPolicy' to be either 'queue' or 'steer'.")
    assert bad.value.body["ok"] is False
    with pytest.raises(ResponseError) as unknown:
        list(eve.stream("wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV"))
    assert (unknown.value.status, unknown.value.message) == (404, "Session not found.")
    with pytest.raises(ValueError, match="absolute"):
        eve.result("wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV", -1)


def test_the_dev_session_list(eve: EveClient) -> None:
    session_id = eve.create()
    sessions = eve.sessions()
    assert sessions[0]["sessionId"] == session_id and sessions[0]["status"] == "active"


def test_an_unreachable_server() -> None:
    with EveClient("http://127.0.0.1:1") as eve, pytest.raises(ServerUnreachable) as failed:
        eve.health()
    assert failed.value.url == "http://127.0.0.1:1/eve/v1/health"
    with EveClient("http://127.0.0.1:1") as eve, pytest.raises(ServerUnreachable):
        list(eve.stream("wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV"))


def test_the_token_is_sent_as_a_bearer(compiled_app: CompiledApp) -> None:
    assert compiled_app.root is not None
    auth = BearerTokenAuth("client-test-token")
    with LiveServer(compiled_app.root, compiled_app.manifest, mode="production", auth=auth) as production:
        with EveClient(production.url, token="client-test-token") as eve:
            assert eve.result(eve.create("hello")).reply == "echo: hello"
            with pytest.raises(ResponseError) as missing:
                eve.sessions()  # development only
            assert missing.value.status == 404
        with EveClient(production.url) as anonymous, pytest.raises(ResponseError) as refused:
            anonymous.create("hello")
        assert refused.value.status == 401


def test_clear_and_compact(eve: EveClient) -> None:
    session_id = eve.create("hello")
    eve.result(session_id)
    start = eve.event_count(session_id)
    assert eve.compact(session_id) == "accepted"
    assert eve.clear(session_id) == "accepted"
    kinds: list[str] = []
    for event in eve.stream(session_id, start):
        kinds.append(event["type"])
        if kinds.count("session.waiting") == 2:
            break
    assert kinds[0] == "compaction.requested" and "context.cleared" in kinds
    assert eve.reset(session_id) == "reset"
    assert eve.clear(session_id) == "no_active_session"
    assert eve.compact(session_id) == "no_active_session"
