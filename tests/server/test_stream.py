"""The stream route (spec §2.9, §6 checks 35-42, 52; observations 14-17).

Bounded reads go through the in-process client; live follows, heartbeats, leases and
disconnects through a real uvicorn server on 127.0.0.1.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.responses import ApiError
from eve_runtime.server.stream import StreamOptions, StreamQuery, parse_stream_query
from tests.server.support import Harness, LiveServer, parse_ndjson

STREAM_HEADERS = {
    "content-type": "application/x-ndjson; charset=utf-8",
    "x-eve-stream-format": "ndjson",
    "x-eve-stream-version": "26",
    "cache-control": "no-store, no-transform",
    "x-accel-buffering": "no",
}


@pytest.fixture
def settled(api: Harness) -> tuple[str, list[bytes]]:
    """A session with two finished turns, and its stored lines."""
    session_id = api.create("hello")
    api.wait_for(session_id, "session.waiting")
    api.client.post(f"/eve/v1/session/{session_id}", json={"message": "how are you"})
    api.wait_for(session_id, "session.waiting", count=2)
    rows = api.call(api.store.read_events, session_id, 0, None)
    return session_id, [row.line for row in rows]


def _read(api: Harness, session_id: str, query: str) -> Any:
    response = api.client.get(f"/eve/v1/session/{session_id}/stream?{query}")
    assert response.status_code == 200, response.text
    return response


def _lines(body: bytes) -> list[bytes]:
    assert body.startswith(b"\n") and body.endswith(b"\n")
    return body[1:].splitlines()


def test_bounded_read_headers_and_body(api: Harness, settled: tuple[str, list[bytes]]) -> None:
    session_id, stored = settled
    response = _read(api, session_id, "follow=false")
    for name, value in STREAM_HEADERS.items():
        assert response.headers[name] == value
    assert response.headers["x-eve-session-id"] == session_id
    assert response.headers["x-eve-stream-tail-index"] == str(len(stored) - 1)
    assert response.content[:2] == b"\n{"
    assert _lines(response.content) == stored  # the stored bytes, never re-serialized


def test_every_start_index_returns_the_suffix(api: Harness, settled: tuple[str, list[bytes]]) -> None:
    session_id, stored = settled
    for k in range(len(stored) + 2):
        assert _lines(_read(api, session_id, f"follow=false&startIndex={k}").content) == stored[k:], k
    for k in range(1, len(stored) + 1):
        assert _lines(_read(api, session_id, f"follow=false&startIndex=-{k}").content) == stored[-k:], k


def test_start_index_edges(api: Harness, settled: tuple[str, list[bytes]]) -> None:
    session_id, stored = settled
    last = json.loads(_lines(_read(api, session_id, "follow=false&startIndex=-1").content)[0])
    assert last["type"] == "session.waiting"
    for query, expected in [
        ("startIndex=-9999", stored),
        ("startIndex=-0", stored),
        (f"startIndex={-(2**63)}", stored),
        ("startIndex=9999", []),
        (f"startIndex={2**63}", []),
    ]:
        response = _read(api, session_id, f"follow=false&{query}")
        assert (_lines(response.content) if response.content != b"\n" else []) == expected, query
        assert response.headers["x-eve-stream-tail-index"] == str(len(stored) - 1)


def test_include_tail_index_alone_is_bounded(api: Harness, settled: tuple[str, list[bytes]]) -> None:
    session_id, stored = settled
    response = _read(api, session_id, "includeTailIndex=1")
    assert response.headers["x-eve-stream-tail-index"] == str(len(stored) - 1)
    assert _lines(response.content) == stored


def test_rereads_have_identical_ids(api: Harness, settled: tuple[str, list[bytes]]) -> None:
    session_id, _stored = settled
    first = [e["meta"]["id"] for e in api.events(session_id)]
    second = [e["meta"]["id"] for e in api.events(session_id)]
    assert first == second and len(set(first)) == len(first)
    assert all(len(i) == 30 and i.startswith("evt_") for i in first)


def test_query_parsing() -> None:
    assert parse_stream_query({}).follow is True
    assert parse_stream_query({"follow": "false"}).follow is False
    assert parse_stream_query({"follow": "0"}).follow is False
    assert parse_stream_query({"includeTailIndex": "yes"}).include_tail_index is True
    assert parse_stream_query({"includeTailIndex": "0"}).include_tail_index is False
    assert parse_stream_query({"streamControlVersion": "1"}).leases is True
    assert parse_stream_query({"streamControlVersion": ""}).leases is False
    assert parse_stream_query({"follow": "", "includeTailIndex": ""}) == StreamQuery()
    assert parse_stream_query({"follow": "TRUE", "includeTailIndex": "No"}) == StreamQuery()
    for bad in ({"streamControlVersion": "2"}, {"follow": "maybe"}, {"includeTailIndex": "on"}):
        with pytest.raises(ApiError) as refused:
            parse_stream_query(bad)
        assert (refused.value.status, refused.value.code) == (400, "invalid_query")
    assert parse_stream_query({"startIndex": "-0"}).start_index == 0
    assert parse_stream_query({"startIndex": "0042"}).start_index == 42
    assert parse_stream_query({"startIndex": "-" + "9" * 100}).start_index == -(10**30)


# -- live follows ---------------------------------------------------------------------------------


@pytest.fixture
def live(agent: RuntimeAgent, manifest: Manifest) -> Iterator[LiveServer]:
    options = StreamOptions(heartbeat_interval=0.05, lease_duration=0.4)
    with LiveServer(agent, manifest, stream_options=options) as server:
        yield server


@pytest.fixture
def http(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=10) as client:
        yield client


class _Reader:
    """The lines of a streaming response, read on demand (every line kept in `lines`)."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines: list[bytes] = []
        self._chunks = response.iter_raw()
        self._buffer = b""

    def until(self, condition: Callable[[list[bytes]], bool]) -> list[bytes]:
        """Read until `condition(all lines so far)` holds, or the server ends the response."""
        while not condition(self.lines):
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buffer += chunk
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                self.lines.append(line)
        return self.lines

    def to_end(self) -> list[bytes]:
        return self.until(lambda _lines: False)


def _collect(response: httpx.Response, until: Callable[[list[bytes]], bool]) -> list[bytes]:
    return _Reader(response).until(until)


def _types(lines: list[bytes]) -> list[str]:
    return [json.loads(line)["type"] for line in lines if line.strip() and b'"$eve"' not in line]


def _count(event_type: str, n: int = 1) -> Callable[[list[bytes]], bool]:
    return lambda lines: _types(lines).count(event_type) >= n


def _create(http: httpx.Client, message: str) -> str:
    response = http.post("/eve/v1/session", json={"message": message})
    assert response.status_code == 202
    return str(response.json()["sessionId"])


def test_live_follow_catches_up_continues_and_ends_after_reset(http: httpx.Client) -> None:
    session_id = _create(http, "hello")
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as response:
        for name, value in STREAM_HEADERS.items():
            assert response.headers[name] == value
        assert "x-eve-stream-tail-index" not in response.headers
        reader = _Reader(response)
        assert reader.until(_count("session.waiting"))[0] == b""
        assert http.post(f"/eve/v1/session/{session_id}", json={"message": "again"}).status_code == 202
        reader.until(_count("session.waiting", 2))
        assert http.post(f"/eve/v1/session/{session_id}/reset").json()["status"] == "reset"
        lines = reader.to_end()  # the server ends the response after session.completed
    types = _types(lines)
    assert types.count("turn.started") == 2
    assert types[-1] == "session.completed"
    full = parse_ndjson(http.get(f"/eve/v1/session/{session_id}/stream?follow=false").content)
    assert [e["meta"]["id"] for e in full] == [json.loads(line)["meta"]["id"] for line in lines[1:]]


def test_live_follow_from_the_tail(http: httpx.Client) -> None:
    session_id = _create(http, "hello")
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as response:
        _collect(response, _count("session.waiting"))
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream?startIndex=-1") as response:
        reader = _Reader(response)
        assert _types(reader.until(lambda lines: len(lines) >= 2)) == ["session.waiting"]
        http.post(f"/eve/v1/session/{session_id}", json={"message": "more"})
        lines = reader.until(_count("session.waiting", 2))
    assert _types(lines)[:3] == ["session.waiting", "turn.started", "message.received"]


def test_live_follow_of_an_ended_session_replays_and_closes(http: httpx.Client) -> None:
    session_id = _create(http, "hello")
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as response:
        _collect(response, _count("session.waiting"))
    http.post(f"/eve/v1/session/{session_id}/reset")
    for query in ("", "?startIndex=9999", "?startIndex=-1&streamControlVersion=1"):
        with http.stream("GET", f"/eve/v1/session/{session_id}/stream{query}") as response:
            lines = _collect(response, lambda _lines: False)
        assert lines[0] == b""
        assert not lines[1:] or _types(lines)[-1] == "session.completed", query


def test_heartbeats_and_lease_end(http: httpx.Client) -> None:
    session_id = _create(http, "hello")
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream?streamControlVersion=1") as response:
        lines = _collect(response, lambda _lines: False)  # the server ends it at the lease
    assert lines[0] == b""
    last_event = max(i for i, line in enumerate(lines) if line.startswith(b'{"data"'))
    tail = lines[last_event + 1 :]
    assert tail[-1] == b'{"$eve":"stream.lease-ended","version":1}'
    assert tail[:-1] and all(line == b"" for line in tail[:-1])  # heartbeats: blank lines


def test_no_heartbeats_without_stream_control(http: httpx.Client) -> None:
    session_id = _create(http, "hello")
    url = f"/eve/v1/session/{session_id}/stream"
    with http.stream("GET", url, timeout=httpx.Timeout(10, read=0.5)) as response:
        reader = _Reader(response)
        seen = len(reader.until(_count("session.waiting")))
        with pytest.raises(httpx.ReadTimeout):  # more than a heartbeat interval and a lease of quiet
            reader.to_end()
    assert reader.lines[0] == b"" and all(reader.lines[1:])
    assert len(reader.lines) == seen


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_disconnect_ends_the_stream(live: LiveServer, http: httpx.Client) -> None:
    assert live.app is not None
    streams = live.app.state.streams
    session_id = _create(http, "hello")
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as response:
        _collect(response, _count("session.waiting"))
    _until(lambda: len(streams) == 0, "the first stream did not end")
    baseline = live.task_count()
    with http.stream("GET", f"/eve/v1/session/{session_id}/stream?startIndex=-1") as response:
        reader = _Reader(response)  # kept: dropping its iterator would close the connection already
        reader.until(_count("session.waiting"))
        assert len(streams) == 1
    _until(lambda: len(streams) == 0, "the stream did not end after the client left")
    _until(lambda: live.task_count() <= baseline, "a task of the stream is left behind")


def test_shutdown_ends_live_streams(agent: RuntimeAgent, manifest: Manifest) -> None:
    server = LiveServer(agent, manifest)
    with server, httpx.Client(base_url=server.url, timeout=10) as http:
        session_id = _create(http, "hello")
        with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as response:
            reader = _Reader(response)
            seen = len(reader.until(_count("session.waiting")))
            server.stop()
            rest = reader.to_end()[seen:]  # ends cleanly, not by a timeout
        assert all(rest)
