"""The recording `eve-golden/o_clear_and_compact` replayed over HTTP (checks 26 and 29, observed items 17-18).

eve 0.80.1 answered: an echo turn, `POST .../clear` (202), a turn whose model input had no earlier
message, `POST .../compact` (202), and a last turn. The stream must have the recorded event
sequence (text deltas may coalesce differently), the control events' fields, and the next turn's
id on `context.cleared` and `compaction.*`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.server.support import Harness

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "eve-golden" / "o_clear_and_compact.json"


def _without_deltas(types: list[str]) -> list[str]:
    """Event types with each run of `message.appended` collapsed to one (coalescing may differ)."""
    collapsed: list[str] = []
    for kind in types:
        if not (kind == "message.appended" and collapsed and collapsed[-1] == kind):
            collapsed.append(kind)
    return collapsed


def _of(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(e for e in events if e["type"] == kind)


@pytest.mark.skipif(not GOLDEN.is_file(), reason="the eve recordings are not on this machine")
def test_the_clear_and_compact_recording(api: Harness) -> None:
    golden = json.loads(GOLDEN.read_text())
    exchanges = {e["label"]: e for e in golden["exchanges"]}
    recorded = golden["final_stream"]["response"]["ndjson"]

    create = exchanges["create"]
    session_id = api.create(json.loads(create["request"]["body"])["message"])
    api.wait_for(session_id, "session.waiting")
    steps: list[tuple[str, str, Any, int]] = [
        ("clear", "clear", None, 2),
        ("follow-up after clear", "", "after clear", 3),
        ("compact", "compact", {}, 4),
        ("follow-up after compact", "", "after compact", 5),
    ]
    for label, route, body, boundaries in steps:
        expected = exchanges[label]["response"]
        path = f"/eve/v1/session/{session_id}" + (f"/{route}" if route else "")
        if route:
            response = api.client.post(path, json=body) if body is not None else api.client.post(path)
        else:
            response = api.client.post(path, json={"message": body})
        assert response.status_code == expected["status"]
        answer = response.json()
        assert set(answer) == set(expected["json"])
        assert {k: v for k, v in answer.items() if k not in ("sessionId", "deliveryId")} == {
            k: v for k, v in expected["json"].items() if k not in ("sessionId", "deliveryId")
        }
        api.wait_for(session_id, "session.waiting", count=boundaries)

    events = api.events(session_id)
    assert _without_deltas([e["type"] for e in events]) == _without_deltas(golden["final_event_types"])
    for kind in ("context.cleared", "compaction.requested", "compaction.completed"):
        ours, theirs = _of(events, kind)["data"], _of(recorded, kind)["data"]
        assert set(ours) == set(theirs), kind
        assert (ours["turnId"], ours["sequence"]) == (theirs["turnId"], theirs["sequence"])
        assert ours["sessionId"] == session_id
    assert isinstance(_of(events, "compaction.requested")["data"]["usageInputTokens"], float)
    waits = [e for e in events if e["type"] == "session.waiting"]
    # the clear keeps the usage; the summary call is counted, as recorded
    assert waits[1]["data"]["usage"] == waits[0]["data"]["usage"]
    assert waits[3]["data"]["usage"]["inputTokens"] > waits[2]["data"]["usage"]["inputTokens"]
    # the control events carry the delivery ids of the turn before them
    cleared = _of(events, "context.cleared")
    assert cleared["meta"]["deliveryIds"] == events[0]["meta"]["deliveryIds"]
    turn_1 = next(e for e in events if e["type"] == "turn.started" and e["data"]["turnId"] == "turn_1")
    assert _of(events, "compaction.requested")["meta"]["deliveryIds"] == turn_1["meta"]["deliveryIds"]
