"""Every route's status codes, bodies and headers (spec §2, §6 checks 1-3, 9, 11-12, 19-22, 31-33, 81-82)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from eve_runtime.ids import SESSION_ID_PATTERN
from tests.server.support import Harness, parse_ndjson

UNKNOWN = "wrun_01AAAAAAAAAAAAAAAAAAAAAAAA"
NOT_ACTIVE = {"code": "session_not_active", "error": "The session is no longer active.", "ok": False}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_health_get_and_head(api: Harness) -> None:
    response = api.client.get("/eve/v1/health")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "status": "ready", "workflowId": "workflow//eve//workflowEntry"}
    assert response.headers["x-eve-task-protocol"] == "1"
    assert response.headers["content-type"] == "application/json"
    head = api.client.head("/eve/v1/health")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["x-eve-task-protocol"] == "1"


def test_info(api: Harness) -> None:
    response = api.client.get("/eve/v1/info")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    info = response.json()
    assert (info["kind"], info["version"], info["mode"]) == ("eve-agent-info", 6, "development")
    assert info["agent"]["name"] == "weather-agent"
    assert [t["name"] for t in info["tools"]["static"]] == ["get_weather", "send_alert"]


def test_openapi_document_is_served(api: Harness) -> None:
    response = api.client.get("/eve/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"] == "3.1.0"
    assert "/eve/v1/session/{sessionId}/stream" in document["paths"]


def test_create_with_message(api: Harness) -> None:
    response = api.client.post("/eve/v1/session", json={"message": "hi"})
    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"ok", "sessionId", "status"}
    assert body["ok"] is True and body["status"] == "accepted"
    assert SESSION_ID_PATTERN.match(body["sessionId"])
    assert response.headers["x-eve-session-id"] == body["sessionId"]
    assert response.headers["cache-control"] == "no-store"
    events = api.wait_for(body["sessionId"], "session.waiting")
    received = next(e for e in events if e["type"] == "message.received")
    assert received["data"]["message"] == "hi"
    assert received["data"]["parts"] == [{"text": "hi", "type": "text"}]
    reply = next(e for e in events if e["type"] == "message.completed")
    assert reply["data"]["message"] == "echo: hi"


def test_create_in_background_mode_is_an_ordinary_conversation(api: Harness) -> None:
    # eve 0.80.1 answers `mode: "background"` with 202 (eve-observed.md #24); the session converses as usual
    response = api.client.post("/eve/v1/session", json={"message": "hi", "mode": "background"})
    assert response.status_code == 202
    assert set(response.json()) == {"ok", "sessionId", "status"}
    events = api.wait_for(response.json()["sessionId"], "session.waiting")
    assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]
    assert api.client.post("/eve/v1/session", json={"message": "hi", "mode": 3}).status_code == 400


@pytest.mark.parametrize("body", [None, b"", b"{}", b" { } "])
def test_create_without_message_parks_the_session(api: Harness, body: bytes | None) -> None:
    response = api.client.post("/eve/v1/session", content=body)
    assert response.status_code == 202, response.text
    session_id = response.json()["sessionId"]
    stream = api.client.get(f"/eve/v1/session/{session_id}/stream?follow=false&includeTailIndex=1")
    assert stream.content == b"\n"
    assert stream.headers["x-eve-stream-tail-index"] == "-1"


def test_first_message_after_an_empty_create_opens_turn_0(api: Harness) -> None:
    session_id = api.create()
    response = api.client.post(f"/eve/v1/session/{session_id}", json={"message": "x"})
    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"ok", "sessionId", "status", "deliveryId"}
    assert (body["ok"], body["sessionId"], body["status"]) == (True, session_id, "accepted")
    assert UUID.match(body["deliveryId"])
    assert response.headers["x-eve-session-id"] == session_id
    events = api.wait_for(session_id, "session.waiting")
    assert [e["type"] for e in events[:3]] == ["session.started", "turn.started", "message.received"]
    assert {k: v for k, v in events[1]["data"].items() if k != "trace"} == {"sequence": 0, "turnId": "turn_0"}
    assert all(body["deliveryId"] in e["meta"]["deliveryIds"] for e in events)


def test_text_parts_are_flattened_with_newlines(api: Harness) -> None:
    parts: list[dict[str, Any]] = [{"type": "text", "text": "one"}, {"type": "text", "text": "two", "extra": 1}]
    session_id = api.create(parts)
    events = api.wait_for(session_id, "session.waiting")
    received = next(e for e in events if e["type"] == "message.received")
    assert received["data"]["message"] == "one\ntwo"
    assert received["data"]["parts"] == [{"text": "one", "type": "text"}, {"text": "two", "type": "text"}]


def test_idempotency_key_answers_the_first_delivery(api: Harness) -> None:
    session_id = api.create("first")
    api.wait_for(session_id, "session.waiting")
    body = {"message": "again", "idempotencyKey": "k-1"}
    first = api.client.post(f"/eve/v1/session/{session_id}", json=body).json()
    second = api.client.post(f"/eve/v1/session/{session_id}", json=body).json()
    assert first["deliveryId"] == second["deliveryId"]
    events = api.wait_for(session_id, "session.waiting", count=2)
    assert sum(1 for e in events if e["type"] == "turn.started") == 2


def test_operation_id_creates_once(api: Harness) -> None:
    first = api.create("hello", operationId="op-1")
    second = api.create("hello", operationId="op-1")
    assert first == second


def test_queue_turn_policy_is_accepted(api: Harness) -> None:
    session_id = api.create("one")
    response = api.client.post(f"/eve/v1/session/{session_id}", json={"message": "two", "turnPolicy": "queue"})
    assert response.status_code == 202
    events = api.wait_for(session_id, "session.waiting", count=2)
    assert [e["data"]["turnId"] for e in events if e["type"] == "turn.started"] == ["turn_0", "turn_1"]


def test_stale_input_responses_start_a_turn(api: Harness) -> None:
    session_id = api.create("hi")
    api.wait_for(session_id, "session.waiting")
    body = {"inputResponses": [{"requestId": "nope", "optionId": "approve"}]}
    response = api.client.post(f"/eve/v1/session/{session_id}", json=body)
    assert response.status_code == 202
    assert "deliveryId" in response.json()
    events = api.wait_for(session_id, "session.waiting", count=2)
    received = [e for e in events if e["type"] == "message.received"]
    assert received[-1]["data"]["message"] == "approve"


@pytest.mark.parametrize("session_id", [UNKNOWN, "not-a-wrun-id", "wrun_01aaaaaaaaaaaaaaaaaaaaaaaa"])
def test_follow_up_to_unknown_or_malformed_session(api: Harness, session_id: str) -> None:
    response = api.client.post(f"/eve/v1/session/{session_id}", json={"message": "x"})
    assert response.status_code == 409
    assert response.json() == NOT_ACTIVE
    assert response.headers["cache-control"] == "no-store"


def test_cancel(api: Harness) -> None:
    session_id = api.create("/delay 100\n/reply a slow answer of many words that takes a while to stream")
    api.wait_for(session_id, "message.appended")
    response = api.client.post(f"/eve/v1/session/{session_id}/cancel")
    assert response.status_code == 202
    assert response.json() == {"ok": True, "sessionId": session_id, "status": "accepted"}
    events = api.wait_for(session_id, "session.waiting")
    types = [e["type"] for e in events]
    assert "turn.cancelled" in types and "turn.failed" not in types and "session.failed" not in types
    idle = api.client.post(f"/eve/v1/session/{session_id}/cancel", json={"turnId": "turn_0"})
    assert idle.status_code == 202


def test_cancel_unknown_session(api: Harness) -> None:
    for session_id in (UNKNOWN, "nope"):
        response = api.client.post(f"/eve/v1/session/{session_id}/cancel")
        assert response.status_code == 200
        assert response.json() == {"ok": True, "status": "no_active_turn"}


def test_reset_then_everything_is_inactive(api: Harness) -> None:
    session_id = api.create("before reset")
    api.wait_for(session_id, "session.waiting")
    response = api.client.post(f"/eve/v1/session/{session_id}/reset", json={"reason": "Start over"})
    assert response.status_code == 200
    assert response.json() == {"ok": True, "previousSessionId": session_id, "status": "reset"}
    events = api.events(session_id)
    assert events[-1]["type"] == "session.completed"
    assert events[-1]["meta"]["deliveryIds"] == events[-2]["meta"]["deliveryIds"]  # the last turn's, as in eve
    assert events[-1]["meta"]["deliveryIds"]
    follow_up = api.client.post(f"/eve/v1/session/{session_id}", json={"message": "after reset"})
    assert (follow_up.status_code, follow_up.json()) == (409, NOT_ACTIVE)
    assert api.client.post(f"/eve/v1/session/{session_id}/reset").json() == {"ok": True, "status": "no_active_session"}
    assert api.client.post(f"/eve/v1/session/{session_id}/cancel").json() == {"ok": True, "status": "no_active_turn"}
    for control in ("clear", "compact"):
        answer = api.client.post(f"/eve/v1/session/{session_id}/{control}")
        assert (answer.status_code, answer.json()) == (200, {"ok": True, "status": "no_active_session"})


@pytest.mark.parametrize("control", ["compact", "clear"])
def test_compact_and_clear(api: Harness, control: str) -> None:
    """Checks 26, 29 and 33: 202 on an active session (applied once it is idle), 200 when inactive."""
    unknown = api.client.post(f"/eve/v1/session/{UNKNOWN}/{control}")
    assert (unknown.status_code, unknown.json()) == (200, {"ok": True, "status": "no_active_session"})
    malformed = api.client.post(f"/eve/v1/session/not-a-session-id/{control}")
    assert (malformed.status_code, malformed.json()) == (200, {"ok": True, "status": "no_active_session"})
    session_id = api.create("hi")
    api.wait_for(session_id, "session.waiting")
    bodies: list[dict[str, Any] | None] = [{}, None]
    for body in bodies:
        active = api.client.post(f"/eve/v1/session/{session_id}/{control}", json=body)
        assert active.status_code == 202
        assert active.json() == {"ok": True, "sessionId": session_id, "status": "accepted"}
    events = api.wait_for(session_id, "session.waiting", count=3)
    marker = "compaction.completed" if control == "compact" else "context.cleared"
    assert [e["type"] for e in events].count(marker) >= 1


def test_stream_of_unknown_session(api: Harness) -> None:
    for query in ("?follow=false", "?follow=false&includeTailIndex=1", ""):
        response = api.client.get(f"/eve/v1/session/{UNKNOWN}/stream{query}")
        assert response.status_code == 404
        assert response.json() == {"error": "Session not found.", "ok": False}


def test_a_subagents_stream_is_reached_through_its_parent(api: Harness) -> None:
    parent = api.create('/call forecaster {"message": "/reply Sunny all week."}')
    events = api.wait_for(parent, "session.waiting")
    started = next(e["data"] for e in events if e["type"] == "agent.started")
    child, call_id = started["sessionId"], started["callId"]
    path = f"/eve/v1/session/{parent}/subagents/{call_id}/{child}/stream?follow=false"
    response = api.client.get(path)
    assert response.status_code == 200
    assert response.headers["x-eve-stream-format"] == "ndjson"
    child_events = parse_ndjson(response.content)
    assert child_events == api.events(child)
    assert child_events[0]["data"]["invocation"]["parentSessionId"] == parent
    assert next(e for e in events if e["type"] == "task.settled")["data"]["output"] == "Sunny all week."
    for wrong in (
        f"/eve/v1/session/{UNKNOWN}/subagents/{call_id}/{child}/stream",
        f"/eve/v1/session/{parent}/subagents/call_other/{child}/stream",
        f"/eve/v1/session/{parent}/subagents/{call_id}/{UNKNOWN}/stream",
        f"/eve/v1/session/{parent}/subagents/{call_id}/{parent}/stream",
    ):
        response = api.client.get(wrong + "?follow=false")
        assert response.status_code == 404, wrong
        assert response.json() == {"error": "Session not found.", "ok": False}


def test_unknown_routes_and_wrong_methods_are_json(api: Harness) -> None:
    missing = api.client.get("/eve/v1/nope")
    assert missing.status_code == 404
    assert missing.json()["ok"] is False and missing.json()["code"] == "not_found"
    assert api.client.get("/eve/v1/health/").status_code == 404  # no redirects
    wrong = api.client.get("/eve/v1/session")
    assert wrong.status_code == 405
    assert wrong.json()["code"] == "method_not_allowed"
    assert wrong.headers["allow"] == "POST"
    for method, path in [("HEAD", "/eve/v1/info"), ("DELETE", f"/eve/v1/session/{UNKNOWN}"), ("PUT", "/eve/v1/health")]:
        response = api.client.request(method, path)
        assert response.status_code == 405, (method, path)
        assert response.headers["content-type"] == "application/json"


def test_every_json_answer_is_no_store(api: Harness) -> None:
    session_id = api.create("hi")
    requests = [
        ("GET", "/eve/v1/health", None),
        ("GET", "/eve/v1/info", None),
        ("POST", "/eve/v1/session", b"{"),
        ("POST", f"/eve/v1/session/{session_id}", b'{"message":"x"}'),
        ("POST", f"/eve/v1/session/{UNKNOWN}", b'{"message":"x"}'),
        ("POST", f"/eve/v1/session/{UNKNOWN}/cancel", None),
        ("GET", f"/eve/v1/session/{UNKNOWN}/stream", None),
        ("GET", "/eve/v1/nope", None),
    ]
    for method, path, body in requests:
        response = api.client.request(method, path, content=body)
        assert response.headers["cache-control"] == "no-store", (method, path)


def test_an_unexpected_failure_is_a_logged_500_with_an_error_id(
    api: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(**_kwargs: Any) -> None:
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(api.runtime, "create_session", broken)
    response = api.client.post("/eve/v1/session", json={"message": "hi"})
    assert response.status_code == 500
    body = response.json()
    assert (body["ok"], body["error"], body["code"]) == (False, "Failed to create the session.", "internal_error")
    assert re.fullmatch(r"[0-9a-f]{32}", body["errorId"])
    assert "the engine broke" not in response.text  # no traceback or detail leaks
    assert body["errorId"] in caplog.text and "the engine broke" in caplog.text


def test_a_store_failure_mid_stream_ends_the_response(
    api: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    session_id = api.create("hi")
    api.wait_for(session_id, "session.waiting")

    async def broken(*_args: Any) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(api.store, "read_events", broken)
    monkeypatch.setattr(api.store, "read_chunk", broken)
    response = api.client.get(f"/eve/v1/session/{session_id}/stream?follow=false")
    assert response.status_code == 200
    # not a normal end: a control record says the stream was cut (the client reconnects from its cursor)
    assert response.content == b'\n{"$eve":"stream.interrupted","version":1,"code":"internal_error"}\n'
    assert "stream failed" in caplog.text


def test_the_last_line_of_defence(compiled_app: Any, caplog: pytest.LogCaptureFixture) -> None:
    from starlette.testclient import TestClient

    from eve_runtime.server.responses import CatchAll

    async def exploding(scope: Any, receive: Any, send: Any) -> None:
        raise ValueError("boom")

    response = TestClient(CatchAll(exploding)).get("/anything")  # no lifespan: only the request
    assert response.status_code == 500
    assert response.json()["code"] == "internal_error"
    assert response.json()["errorId"] in caplog.text


def test_a_stranded_session_answers_as_check_34_says(api: Harness) -> None:
    import dataclasses

    record = dataclasses.replace(api.runtime.new_record(), eve_version="0.0.1")
    session, _created = api.call(api.store.create_session, record, None)
    sid = session.id
    sent = api.client.post(f"/eve/v1/session/{sid}", json={"message": "hello"})
    assert sent.status_code == 409
    assert sent.json()["code"] == "session_stranded" and sent.json()["eveVersion"] == "0.0.1"
    assert "eve 0.0.1" in sent.json()["error"]
    assert api.client.get(f"/eve/v1/session/{sid}/stream?follow=false").status_code == 200
    live = api.client.get(f"/eve/v1/session/{sid}/stream")
    assert live.status_code == 409 and live.json()["code"] == "session_stranded"
    cleared = api.client.post(f"/eve/v1/session/{sid}/clear")
    assert cleared.status_code == 409 and cleared.json()["code"] == "session_stranded"
    assert api.client.post(f"/eve/v1/session/{sid}/compact").json() == {"ok": True, "status": "no_active_session"}
    assert api.client.post(f"/eve/v1/session/{sid}/cancel").json() == {"ok": True, "status": "no_active_turn"}
    reset = api.client.post(f"/eve/v1/session/{sid}/reset")
    assert reset.json() == {"ok": True, "previousSessionId": sid, "status": "reset"}
    ended = api.events(sid)
    assert [e["type"] for e in ended] == ["session.failed"]
    assert ended[0]["data"] == {
        "code": "session_stranded",
        "message": "This session is no longer available.",
        "details": {"trigger": "reset"},
        "sessionId": sid,
    }
    assert api.client.post(f"/eve/v1/session/{sid}", json={"message": "again"}).json() == NOT_ACTIVE


def test_compact_and_clear_on_a_dormant_session(api: Harness) -> None:
    """A session of an earlier `eve dev` run: clear is refused like a message, compact has nothing to do."""
    import time

    session_id = api.create("hi")
    api.wait_for(session_id, "session.waiting")
    deadline = time.monotonic() + 5
    while session_id in api.runtime.actors and time.monotonic() < deadline:
        time.sleep(0.01)  # a running actor takes deliveries without asking: wait until it parked
    api.runtime.availability.dormant_before = time.time() + 60
    cleared = api.client.post(f"/eve/v1/session/{session_id}/clear")
    assert cleared.status_code == 409 and cleared.json()["code"] == "session_dormant"
    compacted = api.client.post(f"/eve/v1/session/{session_id}/compact")
    assert (compacted.status_code, compacted.json()) == (200, {"ok": True, "status": "no_active_session"})
