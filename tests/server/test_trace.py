"""`data.trace` on `session.started` and `turn.started`: W3C ids, minted or taken from `traceparent`."""

from __future__ import annotations

import re
from typing import Any

from eve_runtime.telemetry.ids import parse_traceparent
from tests.server.support import Harness

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = f"00-{CALLER_TRACE}-00f067aa0ba902b7-00"
SUBAGENT = '/call forecaster {"message": "/reply Sunny all week."}'


def traces(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"]["trace"] for e in events if e["type"] == kind]


def test_a_session_and_its_first_turn_share_minted_ids_and_later_turns_get_their_own(api: Harness) -> None:
    session_id = api.create("hello")
    api.wait_for(session_id, "session.waiting")
    api.client.post(f"/eve/v1/session/{session_id}", json={"message": "again"})
    events = api.wait_for(session_id, "session.waiting", count=2)
    (session,) = traces(events, "session.started")
    turns = traces(events, "turn.started")
    assert set(session) == {"decision", "spanId", "traceFlags", "traceId"}  # eve's shape (observed #20)
    assert session["decision"] == {
        "action": "record",
        "recordInputs": True,
        "recordOutputs": True,
    }  # eve dev records content
    assert HEX32.match(session["traceId"]) and HEX16.match(session["spanId"]) and session["traceFlags"] == 1
    first, second = turns
    assert first == session  # as eve 0.80.1 reports them
    assert second["traceId"] != session["traceId"] and HEX32.match(second["traceId"])
    assert HEX16.match(second["spanId"]) and second["spanId"] != session["spanId"]
    other = api.create("elsewhere")
    (elsewhere,) = traces(api.wait_for(other, "session.waiting"), "session.started")
    assert elsewhere["traceId"] != session["traceId"]


def test_a_traceparent_on_create_and_on_a_follow_up_is_honoured(api: Harness) -> None:
    created = api.client.post("/eve/v1/session", json={"message": "hello"}, headers={"traceparent": CALLER})
    session_id = created.json()["sessionId"]
    api.wait_for(session_id, "session.waiting")
    later = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    api.client.post(f"/eve/v1/session/{session_id}", json={"message": "again"}, headers={"traceparent": later})
    api.client.post(f"/eve/v1/session/{session_id}", json={"message": "third"})
    events = api.wait_for(session_id, "session.waiting", count=3)
    (session,) = traces(events, "session.started")
    first, second, third = traces(events, "turn.started")
    assert (session["traceId"], session["traceFlags"]) == (CALLER_TRACE, 0)  # the caller's trace and flags
    assert session["spanId"] != "00f067aa0ba902b7"  # the caller's span is the parent, not ours
    assert first == session
    assert (second["traceId"], second["traceFlags"]) == ("0af7651916cd43dd8448eb211c80319c", 1)
    assert second["spanId"] != "b7ad6b7169203331"
    assert third["traceId"] not in (CALLER_TRACE, second["traceId"])  # without a header: a trace of its own


def test_a_malformed_traceparent_is_ignored(api: Harness) -> None:
    for value in ("garbage", f"00-{'0' * 32}-00f067aa0ba902b7-01", f"01-{CALLER_TRACE}-00f067aa0ba902b7-01"):
        created = api.client.post("/eve/v1/session", json={"message": "hi"}, headers={"traceparent": value})
        assert created.status_code == 202
        (session,) = traces(api.wait_for(created.json()["sessionId"], "session.waiting"), "session.started")
        assert HEX32.match(session["traceId"]) and session["traceId"] != CALLER_TRACE


def test_a_subagent_session_joins_its_parent_turns_trace(api: Harness) -> None:
    session_id = api.create(SUBAGENT)
    events = api.wait_for(session_id, "session.waiting")
    (turn,) = traces(events, "turn.started")
    (started,) = [e for e in events if e["type"] == "agent.started"]
    child = api.events(started["data"]["sessionId"])
    (child_session,) = traces(child, "session.started")
    assert child_session["traceId"] == turn["traceId"]
    assert child_session["spanId"] != turn["spanId"]
    assert traces(child, "turn.started")[0] == child_session


def test_traceparent_parsing() -> None:
    parsed = parse_traceparent(f"  {CALLER.upper()}  ")
    assert parsed is not None and parsed.traceparent == CALLER  # case and whitespace do not matter
    assert parse_traceparent(None) is None and parse_traceparent(f"00-{CALLER_TRACE}-{'0' * 16}-01") is None
