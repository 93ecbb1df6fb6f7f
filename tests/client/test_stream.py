"""Reading streams: resumed from the cursor after drops, leases and probes, deduplicated by `meta.id`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from eve_runtime.client import (
    AsyncEveClient,
    Backoff,
    EveClient,
    StreamProtocolError,
    StreamReconnectExhausted,
)
from tests.client.transports import AsyncCuttingTransport, CuttingTransport
from tests.server.support import LiveServer

TOOL_TURN = '/say Looking.\n/call get_weather {"city": "Paris"}\n/reply Sunny in Paris.'
SLOW = "/delay 60\n/reply one two three four five six seven eight"
SESSION = "wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV"


def ids(events: Any) -> list[str]:
    return [event["meta"]["id"] for event in events]


def starts(transport: CuttingTransport | AsyncCuttingTransport) -> list[int]:
    return [int(url.params["startIndex"]) for url in transport.stream_requests]


def settled(server: LiveServer, message: str) -> tuple[str, list[dict[str, Any]]]:
    with EveClient(server.url) as eve:
        session_id = eve.create(message)
        eve.result(session_id)
        return session_id, eve.events(session_id)


@pytest.mark.parametrize("how", ["error", "end"])
def test_a_bounded_read_resumes_after_every_drop(server: LiveServer, how: Any) -> None:
    session_id, expected = settled(server, TOOL_TURN)
    transport = CuttingTransport(3, how)
    with EveClient(server.url, transport=transport) as eve:
        events = eve.events(session_id)
    assert ids(events) == ids(expected)  # no gap, no duplicate, same order
    assert starts(transport) == list(range(0, len(expected), 3))


@pytest.mark.parametrize("how", ["error", "end"])
def test_a_live_follow_resumes_after_every_drop(server: LiveServer, how: Any) -> None:
    transport = CuttingTransport(2, how)
    with EveClient(server.url, transport=transport) as eve:
        session_id = eve.create(TOOL_TURN + "\n/delay 20")
        result = eve.result(session_id)
    assert result.reply == "Sunny in Paris."
    with EveClient(server.url) as plain:
        assert ids(result.events) == ids(plain.events(session_id))
    assert len(transport.stream_requests) >= len(result.events) // 2


def test_a_follow_renews_its_lease(server: LiveServer) -> None:
    transport = CuttingTransport(10_000)  # counts requests, never cuts
    with EveClient(server.url, transport=transport) as eve:
        result = eve.result(eve.create(SLOW))  # longer than the server's 0.25 s lease
        assert result.reply == "one two three four five six seven eight"
        assert ids(result.events) == ids(eve.events(result.session_id))
    follows = [url for url in transport.stream_requests if "follow" not in url.params]
    assert len(follows) >= 2
    assert all(url.params["streamControlVersion"] == "1" for url in follows)


@pytest.mark.anyio
async def test_the_async_client_resumes_after_drops(server: LiveServer) -> None:
    transport = AsyncCuttingTransport(2)
    async with AsyncEveClient(server.url, transport=transport) as eve:
        session_id = await eve.create(TOOL_TURN)
        result = await eve.result(session_id)
        assert result.reply == "Sunny in Paris."
        bounded = await eve.events(session_id)
    assert ids(result.events) == ids(bounded)
    follows = [int(url.params["startIndex"]) for url in transport.stream_requests if "follow" not in url.params]
    assert len(follows) >= 3 and follows == sorted(set(follows)) and follows[0] == 0


@pytest.mark.anyio
async def test_the_async_client_follows_a_live_turn(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        session_id = await eve.create(SLOW)
        seen = []
        async for event in eve.stream(session_id):
            seen.append(event)
            if event["type"] == "session.waiting":
                break
        assert ids(seen) == ids(await eve.events(session_id))
        assert (await eve.result(session_id)).reply == "one two three four five six seven eight"


def test_tail_reads_count_back_from_the_newest_event(server: LiveServer) -> None:
    session_id, expected = settled(server, "hello")
    with EveClient(server.url) as eve:
        assert ids(eve.stream(session_id, -1, follow=False)) == ids(expected[-1:])
        assert ids(eve.stream(session_id, -3, follow=False)) == ids(expected[-3:])
        assert ids(eve.stream(session_id, 4, follow=False)) == ids(expected[4:])
        live = eve.stream(session_id, -2)  # a live follow from the tail: anchored, then resumable
        assert ids(next(live) for _ in range(2)) == ids(expected[-2:])
        eve.reset(session_id)
        assert [e["type"] for e in live] == ["session.completed"]


def test_following_an_ended_session_from_its_end_returns_at_once(server: LiveServer) -> None:
    session_id, _ = settled(server, "hello")
    with EveClient(server.url) as eve:
        eve.reset(session_id)
        count = eve.event_count(session_id)
        started = time.monotonic()
        assert list(eve.stream(session_id, count)) == []
        assert list(eve.stream(session_id, count + 5)) == []
        assert time.monotonic() - started < 2
        assert [e["type"] for e in eve.stream(session_id, count - 1)] == ["session.completed"]


# -- without a server: httpx.MockTransport -----------------------------------------------------


def line(kind: str, event_id: str) -> bytes:
    return json.dumps({"type": kind, "data": {}, "meta": {"id": event_id, "at": "2026-01-01T00:00:00Z"}}).encode()


def stream_response(lines: list[bytes], *, tail: int | None = None, version: str | None = "26") -> httpx.Response:
    headers = {"content-type": "application/x-ndjson"}
    if version is not None:
        headers["x-eve-stream-version"] = version
    if tail is not None:
        headers["x-eve-stream-tail-index"] = str(tail)
    return httpx.Response(200, headers=headers, content=b"\n" + b"".join(item + b"\n" for item in lines))


def mock(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> EveClient:
    return EveClient("http://eve.test", transport=httpx.MockTransport(handler), **options)


def test_events_seen_before_are_dropped_by_id_but_counted_by_the_cursor() -> None:
    log = [
        line("a", "evt_1"),
        line("b", "evt_2"),
        line("a", "evt_1"),
        line("c", "evt_3"),
        line("session.completed", "e4"),
    ]
    requested: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params["startIndex"])
        requested.append(start)
        return stream_response(log[start : start + 2])  # two events per connection, then a clean end

    with mock(handler) as eve:
        events = list(eve.stream(SESSION))
    assert ids(events) == ["evt_1", "evt_2", "evt_3", "e4"]
    assert requested == [0, 2, 4]


def test_transport_records_and_heartbeats_are_not_events() -> None:
    body = [b"", b'{"$eve":"heartbeat"}', line("a", "evt_1"), b"   ", line("session.failed", "evt_2")]
    with mock(lambda request: stream_response(body)) as eve:
        assert [e["type"] for e in eve.stream(SESSION)] == ["a", "session.failed"]


def test_a_stream_that_keeps_failing_gives_up_with_its_cursor() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return stream_response([line("a", "evt_1"), line("b", "evt_2")])
        raise httpx.ConnectError("refused")

    with mock(handler, max_reconnects=2) as eve, pytest.raises(StreamReconnectExhausted) as failed:
        list(eve.stream(SESSION))
    assert failed.value.stream_index == 2 and failed.value.session_id == SESSION
    assert "start_index=2" in str(failed.value)
    assert calls == 3  # the first response, then max_reconnects failed attempts


def test_a_stream_without_the_version_header_is_refused() -> None:
    with mock(lambda request: stream_response([], version=None)) as eve, pytest.raises(StreamProtocolError):
        list(eve.stream(SESSION))
    with mock(lambda request: stream_response([], version="27")) as eve, pytest.raises(StreamProtocolError):
        list(eve.stream(SESSION))
    with mock(lambda request: stream_response([b"{not json"])) as eve, pytest.raises(StreamProtocolError):
        list(eve.stream(SESSION))


def test_a_bounded_read_keeps_the_tail_of_its_first_response() -> None:
    log = [line(kind, f"evt_{i}") for i, kind in enumerate("abcdef")]
    requested: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params["startIndex"])
        requested.append(request.url.params["follow"])
        tail = 2 if not requested[1:] else 5  # the session grew after the first response opened
        return stream_response(log[start : start + 1], tail=tail)

    with mock(handler) as eve:
        assert ids(eve.stream(SESSION, follow=False)) == ["evt_0", "evt_1", "evt_2"]
    assert requested == ["false"] * 3


def test_session_not_ready_is_retried_on_streams() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls < 3:
            return httpx.Response(409, json={"ok": False, "error": "Starting.", "code": "session_not_ready"})
        return stream_response([line("session.completed", "evt_1")])

    with mock(handler, not_ready=Backoff(initial=0.001, total=1)) as eve:
        assert ids(eve.stream(SESSION)) == ["evt_1"]
    assert calls == 3
