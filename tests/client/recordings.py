"""Event lists recorded from the real runtime (the offline test model), for the reducer and transcript tests.

Each scenario runs on a fresh in-process server and returns the session's whole stream once it
is done, so the tests fold real events, not hand-written ones.
"""

from __future__ import annotations

from typing import Any

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from tests.server.support import Harness, harness

__all__ = ["ALERT", "record_scenarios"]

Events = list[dict[str, Any]]
ALERT = '/call send_alert {"city": "Paris", "message": "Storm tonight"}'


def _settled(h: Harness, session_id: str, count: int = 1) -> Events:
    return h.wait_for(session_id, "session.waiting", count=count)


def _answer(h: Harness, session_id: str, option: str) -> None:
    events = h.wait_for(session_id, "turn.waiting")
    request = next(e for e in events if e["type"] == "input.requested")["data"]["requests"][0]
    body = {"inputResponses": [{"requestId": request["requestId"], "optionId": option}]}
    assert h.client.post(f"/eve/v1/session/{session_id}", json=body).status_code == 202


def record_scenarios(agent: RuntimeAgent, manifest: Manifest) -> dict[str, Events]:
    """Every scenario's events, by name."""
    recorded: dict[str, Events] = {}
    with harness(agent, manifest) as h:
        recorded["echo"] = _settled(h, h.create("hello there"))

        recorded["tool"] = _settled(h, h.create('/say Checking.\n/call get_weather {"city": "Paris"}'))

        waiting = h.create(ALERT)
        recorded["approval-waiting"] = h.wait_for(waiting, "turn.waiting")

        approved = h.create(ALERT)
        _answer(h, approved, "approve")
        recorded["approval-approved"] = _settled(h, approved)

        refused = h.create(ALERT)
        _answer(h, refused, "cancel")
        recorded["approval-refused"] = _settled(h, refused)

        recorded["subagent"] = _settled(h, h.create('/call forecaster {"message": "Outlook for Paris"}'))

        recorded["failed"] = _settled(h, h.create("/fail the provider is down"))

        two = h.create("first question")
        _settled(h, two)
        h.client.post(f"/eve/v1/session/{two}", json={"message": "second question"})
        recorded["two-turns"] = _settled(h, two, count=2)

        schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        recorded["schema"] = _settled(h, h.create('/json {"city": "Paris"}', outputSchema=schema))

        slow = h.create("/delay 100\n/reply one two three four five six")
        h.wait_for(slow, "message.appended")
        assert h.client.post(f"/eve/v1/session/{slow}/cancel").status_code == 202
        recorded["cancelled"] = _settled(h, slow)

        ended = h.create("hello")
        _settled(h, ended)
        assert h.client.post(f"/eve/v1/session/{ended}/reset").json()["status"] == "reset"
        recorded["reset"] = h.wait_for(ended, "session.completed")
    return recorded
