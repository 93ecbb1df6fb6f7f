"""The client's protocol rules without a server: retries of `session_not_ready`, error answers, bodies, headers."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from eve_runtime.client import AsyncEveClient, Backoff, EveClient, ResponseError
from eve_runtime.client._protocol import camel_fields, decode_answer

SESSION = "wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV"
NOT_READY = {"ok": False, "error": "The session is starting.", "code": "session_not_ready"}
QUICK = Backoff(initial=0.001, maximum=0.004, total=0.05)


def accepted(request: httpx.Request) -> httpx.Response:
    return httpx.Response(202, json={"ok": True, "sessionId": SESSION, "status": "accepted", "deliveryId": "d-1"})


class NotReadyThen:
    """A server that answers `409 session_not_ready` `times` times, then like `then`."""

    def __init__(self, times: int, then: Callable[[httpx.Request], httpx.Response]) -> None:
        self.times, self.then = times, then
        self.calls: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(request)
        return httpx.Response(409, json=NOT_READY) if len(self.calls) <= self.times else self.then(request)


def test_backoff_doubles_up_to_its_maximum_within_its_budget() -> None:
    delays = list(Backoff().delays())
    assert delays[:6] == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
    assert sum(delays) == pytest.approx(20.0)
    assert max(delays) == 2.0
    assert list(Backoff(initial=1, maximum=1, total=2.5).delays()) == [1, 1, 0.5]


def test_a_send_is_retried_while_the_session_is_not_ready() -> None:
    handler = NotReadyThen(3, accepted)
    with EveClient("http://eve.test", transport=httpx.MockTransport(handler), not_ready=QUICK) as eve:
        assert eve.send(SESSION, "hello") == "d-1"
    calls = handler.calls
    assert len(calls) == 4
    assert all(json.loads(call.content) == {"message": "hello"} for call in calls)


def test_the_retries_stop_when_the_budget_is_spent() -> None:
    handler = NotReadyThen(1000, accepted)
    started = time.monotonic()
    with EveClient("http://eve.test", transport=httpx.MockTransport(handler), not_ready=QUICK) as eve:
        with pytest.raises(ResponseError) as failed:
            eve.send(SESSION, "hello")
    assert (failed.value.status, failed.value.code) == (409, "session_not_ready")
    assert failed.value.message == "The session is starting."
    assert time.monotonic() - started < 1
    assert 5 < len(handler.calls) < 60


def test_other_errors_are_never_retried() -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(409, json={"ok": False, "error": "The session is no longer active.", "code": "x"})

    with EveClient("http://eve.test", transport=httpx.MockTransport(handler), not_ready=QUICK) as eve:
        with pytest.raises(ResponseError):
            eve.send(SESSION, "hello")
    assert len(calls) == 1


@pytest.mark.anyio
async def test_the_async_client_retries_too() -> None:
    handler = NotReadyThen(2, accepted)
    async with AsyncEveClient("http://eve.test", transport=httpx.MockTransport(handler), not_ready=QUICK) as eve:
        assert await eve.respond(SESSION, [{"request_id": "r-1", "option_id": "approve"}]) == "d-1"
    last = handler.calls[-1]
    assert json.loads(last.content) == {"inputResponses": [{"requestId": "r-1", "optionId": "approve"}]}


def test_bodies_and_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return accepted(request)

    with EveClient("http://eve.test/", token="secret", transport=httpx.MockTransport(handler)) as eve:
        eve.create("hi", operation_id="op", idempotencyKey="k", mode=None)
        eve.create([{"type": "text", "text": "parts"}])
        eve.send(SESSION, "more", turn_policy="queue", idempotency_key="k2", client_context=["a"], output_schema={})
        eve.cancel(SESSION, "turn_1")
        eve.reset(SESSION)
    bodies: list[Any] = [json.loads(request.content) if request.content else None for request in seen]
    assert bodies == [
        {"message": "hi", "operationId": "op", "idempotencyKey": "k"},
        {"message": [{"type": "text", "text": "parts"}]},
        {"message": "more", "turnPolicy": "queue", "idempotencyKey": "k2", "clientContext": ["a"], "outputSchema": {}},
        {"turnId": "turn_1"},
        {},
    ]
    assert [request.url.path for request in seen] == [
        "/eve/v1/session",
        "/eve/v1/session",
        f"/eve/v1/session/{SESSION}",
        f"/eve/v1/session/{SESSION}/cancel",
        f"/eve/v1/session/{SESSION}/reset",
    ]
    assert {request.headers["authorization"] for request in seen} == {"Bearer secret"}


def test_error_answers() -> None:
    with pytest.raises(ResponseError) as plain:
        decode_answer(502, b"<html>bad gateway</html>", "Bad Gateway")
    assert (plain.value.status, plain.value.code, plain.value.message) == (502, None, "Bad Gateway")
    assert str(plain.value) == "502: Bad Gateway"
    with pytest.raises(ResponseError) as coded:
        decode_answer(400, b'{"ok": false, "error": "Invalid JSON body.", "code": "invalid_json"}')
    assert str(coded.value) == "400 invalid_json: Invalid JSON body."
    with pytest.raises(ResponseError, match="not a JSON object"):
        decode_answer(200, b"[1, 2]")
    assert decode_answer(200, b'{"ok": true}') == {"ok": True}


def test_snake_case_fields_become_camel_case() -> None:
    assert camel_fields({"operation_id": "a", "turnPolicy": "queue", "client_context": None}) == {
        "operationId": "a",
        "turnPolicy": "queue",
    }
