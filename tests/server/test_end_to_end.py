"""End to end over real HTTP: the default template's weather tool, called by the offline test model."""

from __future__ import annotations

import json
import re
from datetime import datetime

import httpx

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from tests.server.support import WEATHER_CALL, LiveServer

EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")
REPLY = 'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}'


def _collapse(types: list[str]) -> list[str]:
    """Runs of the same delta event as one `type+`."""
    collapsed: list[str] = []
    for event_type in types:
        if collapsed and collapsed[-1].rstrip("+") == event_type and event_type.endswith(".appended"):
            collapsed[-1] = event_type + "+"
        else:
            collapsed.append(event_type + ("+" if event_type.endswith(".appended") else ""))
    return collapsed


def test_weather_tool_turn_over_http(agent: RuntimeAgent, manifest: Manifest) -> None:
    with LiveServer(agent, manifest) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        created = http.post("/eve/v1/session", json={"message": WEATHER_CALL})
        assert created.status_code == 202
        session_id = created.json()["sessionId"]
        events = []
        with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as response:
            assert response.headers["x-eve-session-id"] == session_id
            lines = response.iter_lines()
            assert next(lines) == ""
            for line in lines:
                events.append(json.loads(line))
                if events[-1]["type"] == "session.waiting":
                    break
        bounded = http.get(f"/eve/v1/session/{session_id}/stream?follow=false")
    assert _collapse([e["type"] for e in events]) == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "action.input.appended+",
        "actions.requested",
        "action.result",
        "step.completed",
        "step.started",
        "message.appended+",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    by_type = {e["type"]: e for e in events}
    assert by_type["actions.requested"]["data"]["actions"][0]["input"] == {"city": "Paris"}
    result = by_type["action.result"]["data"]
    assert result["status"] == "completed"
    assert result["result"]["output"] == {"city": "Paris", "condition": "Sunny", "temperatureF": 72}
    completed = [e for e in events if e["type"] == "step.completed"]
    assert [e["data"]["finishReason"] for e in completed] == ["tool-calls", "stop"]
    assert by_type["message.completed"]["data"]["message"] == REPLY
    assert "".join(e["data"]["messageDelta"] for e in events if e["type"] == "message.appended") == REPLY
    assert by_type["session.waiting"]["data"]["wait"] == "next-user-message"
    delivery_ids = {tuple(e["meta"]["deliveryIds"]) for e in events}
    assert len(delivery_ids) == 1
    for event in events:
        assert list(event) == ["data", "type", "meta"]
        assert EVENT_ID.match(event["meta"]["id"])
        datetime.fromisoformat(event["meta"]["at"].replace("Z", "+00:00"))
    assert bounded.content == b"\n" + b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events)
