"""`POST /eve/v1/session` with `stubs`: refused unless granted, validated, and played back per session."""

from __future__ import annotations

import pytest

from tests.server.support import Harness

CALL = '/call get_weather {"city": "Paris"}'
STUB = {"id": "w", "tool": "get_weather", "outcome": {"response": {"condition": "Stubbed"}}}


def test_stubs_are_refused_without_the_servers_grant(api: Harness) -> None:
    response = api.client.post("/eve/v1/session", json={"message": CALL, "stubs": [STUB]})
    assert response.status_code == 403
    assert response.json()["code"] == "tool_stubs_not_allowed"
    assert "EVE_ALLOW_TOOL_STUBS=1" in response.json()["error"]


def test_with_the_grant_a_stub_answers_the_call(api: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVE_ALLOW_TOOL_STUBS", "1")
    stubbed = api.create(CALL, stubs=[STUB])
    real = api.create(CALL)  # another session has no stubs
    results = {}
    for session_id in (stubbed, real):
        events = api.wait_for(session_id, "session.waiting")
        (result,) = [e["data"]["result"] for e in events if e["type"] == "action.result"]
        results[session_id] = result["output"]
    assert results[stubbed] == {"condition": "Stubbed"}
    assert results[real]["condition"] == "Sunny"


@pytest.mark.parametrize(
    ("stubs", "fragment"),
    [
        ([{"id": "w", "tool": "nope", "outcome": {"response": 1}}], "names no tool of the agent: 'nope'"),
        ([{"id": "w", "tool": "get_weather"}], "exactly one of 'outcome' or 'outcomes'"),
        ("all", "is a list of rules"),
        (
            [{"id": "f", "tool": "forecaster/get_weather", "outcome": {"response": 1}}],
            "names the subagent 'forecaster'",
        ),
    ],
)
def test_invalid_stubs_are_400(api: Harness, monkeypatch: pytest.MonkeyPatch, stubs: object, fragment: str) -> None:
    monkeypatch.setenv("EVE_ALLOW_TOOL_STUBS", "1")
    response = api.client.post("/eve/v1/session", json={"message": CALL, "stubs": stubs})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_stubs" and fragment in response.json()["error"]
