"""Stream versions 21 to 26 (older ones read as 26), and stranded sessions' own error."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import httpx
import pytest

from eve_runtime.client import Conversation, EveClient, ResponseError, SessionStrandedError, StreamProtocolError
from eve_runtime.sessions.runtime import Runtime
from eve_runtime.store.base import SessionRecord
from tests.client.test_stream import SESSION, mock, stream_response
from tests.server.support import LiveServer

AT = {"sequence": 0, "stepIndex": 0, "turnId": "turn_0"}


def event(kind: str, n: int, **data: Any) -> bytes:
    meta = {"at": "2026-01-01T00:00:00Z", "id": f"evt_{n}", "deliveryIds": ["d1"]}
    return json.dumps({"data": data, "type": kind, "meta": meta}).encode()


V24_TURN = [
    event("reasoning.appended", 0, reasoningDelta="Let ", reasoningSoFar="Let ", **AT),
    event("reasoning.appended", 1, reasoningDelta="me", reasoningSoFar="Let me", **AT),
    event("message.appended", 2, messageDelta="Hel", messageSoFar="Hel", **AT),
    event("message.appended", 3, messageDelta="lo", messageSoFar="Hello", **AT),
    event("action.input.appended", 4, callId="c1", inputTextDelta='{"a"', inputTextOffset=0, toolName="t", **AT),
    event("action.input.appended", 5, callId="c1", inputTextDelta=":1}", inputTextOffset=4, toolName="t", **AT),
]
V22_TURN = [  # before 24: snapshots without deltas, a tool's input as `action.input.partial`
    event("message.appended", 0, messageSoFar="Hel", **AT),
    event("message.appended", 1, messageSoFar="Hello", **AT),
    event("action.input.partial", 2, callId="c1", inputTextSoFar='{"a"', input={}, toolName="t", **AT),
    event("action.input.partial", 3, callId="c1", inputTextSoFar='{"a":1}', input={"a": 1}, toolName="t", **AT),
]
CURRENT = [
    {"messageDelta": "Hel", **AT},
    {"messageDelta": "lo", **AT},
    {"callId": "c1", "inputTextDelta": '{"a"', "toolName": "t", **AT},
    {"callId": "c1", "inputTextDelta": ":1}", "toolName": "t", **AT},
]


def read(version: str, lines: list[bytes]) -> list[dict[str, Any]]:
    with mock(lambda request: stream_response(lines, tail=len(lines) - 1, version=version)) as eve:
        return list(eve.stream(SESSION, follow=False))


def test_a_version_24_stream_reads_as_deltas_only() -> None:
    events = read("24", V24_TURN)
    assert [e["data"] for e in events[2:]] == CURRENT  # no snapshot, no offset
    assert [e["data"]["reasoningDelta"] for e in events[:2]] == ["Let ", "me"]
    assert all("reasoningSoFar" not in e["data"] for e in events)
    assert [e["meta"]["id"] for e in events] == [f"evt_{n}" for n in range(6)]
    conversation = Conversation()
    for item in events:
        conversation.apply(item)
    (message,) = conversation.messages
    assert message.text == "Hello"


@pytest.mark.parametrize("version", ["21", "22", "23"])
def test_versions_before_24_derive_deltas_and_tool_input_appends(version: str) -> None:
    events = read(version, V22_TURN)
    assert [e["type"] for e in events] == ["message.appended"] * 2 + ["action.input.appended"] * 2
    assert [e["data"] for e in events] == CURRENT


@pytest.mark.parametrize("version", ["25", "26"])
def test_current_versions_pass_through(version: str) -> None:
    lines = [event("message.appended", 0, messageDelta="Hel", **AT)]
    assert read(version, lines)[0]["data"] == {"messageDelta": "Hel", **AT}


def test_an_old_load_skill_request_gets_the_skill_name() -> None:
    action = {"callId": "c1", "input": {"skill": "daily-summary"}, "kind": "load-skill"}
    (requested,) = read("26", [event("actions.requested", 0, actions=[action], **AT)])
    assert requested["data"]["actions"] == [{**action, "name": "daily-summary"}]


@pytest.mark.parametrize("version", ["20", "27", "x"])
def test_versions_outside_21_to_26_are_refused(version: str) -> None:
    with pytest.raises(StreamProtocolError, match="21 to 26"):
        read(version, [])


def test_a_stranded_session_raises_its_own_error(compiled_app: Any) -> None:
    with LiveServer(compiled_app.root, compiled_app.manifest) as server:
        assert server.app is not None
        runtime: Runtime = server.app.state.runtime
        record = dataclasses.replace(runtime.new_record(), eve_version="0.0.1")

        async def create() -> SessionRecord:
            session, _created = await runtime.store.create_session(record, None)
            return session

        session_id = server.call(create).id
        with EveClient(server.url) as eve:
            for attempt in (
                lambda: eve.send(session_id, "hello"),
                lambda: eve.respond(session_id, [{"requestId": "r1", "optionId": "approve"}]),
                lambda: list(eve.stream(session_id)),
                lambda: eve.clear(session_id),
            ):
                with pytest.raises(SessionStrandedError) as stranded:
                    attempt()
                assert isinstance(stranded.value, ResponseError)
                assert (stranded.value.status, stranded.value.code) == (409, "session_stranded")
                assert stranded.value.eve_version == "0.0.1"
            assert eve.events(session_id) == []  # reading recorded history still works
            assert eve.reset(session_id) == "reset"


def test_other_conflicts_stay_plain_response_errors() -> None:
    body = {"ok": False, "error": "The session is no longer active.", "code": "session_not_active"}
    with mock(lambda request: httpx.Response(409, json=body)) as eve, pytest.raises(ResponseError) as refused:
        eve.send(SESSION, "hi")
    assert not isinstance(refused.value, SessionStrandedError)
