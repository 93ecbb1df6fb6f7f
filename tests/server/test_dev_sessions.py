"""`GET /eve/v1/dev/sessions`: every session of the store, newest first, served by `eve dev` only."""

from __future__ import annotations

from datetime import datetime

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.auth import LoopbackAuth
from eve_runtime.server.bodies import MAX_BODY_BYTES
from eve_runtime.server.openapi import openapi_document
from tests.server.support import Harness, harness

PATH = "/eve/v1/dev/sessions"


def test_lists_every_session_newest_first(api: Harness) -> None:
    parked = api.create()
    talked = api.create("hello")
    retired = api.create("bye")
    api.wait_for(talked, "session.waiting")
    api.wait_for(retired, "session.waiting")
    assert api.client.post(f"/eve/v1/session/{retired}/reset").json()["status"] == "reset"

    response = api.client.get(PATH)

    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["ok"] is True
    sessions = body["sessions"]
    assert [s["sessionId"] for s in sessions] == [retired, talked, parked]
    assert [s["status"] for s in sessions] == ["reset", "active", "active"]
    assert [s["state"] for s in sessions] == ["ended", "idle", "idle"]
    assert [s["preview"] for s in sessions] == ["bye", "hello", ""]
    assert {s["agent"] for s in sessions} == {"weather-agent"}
    assert sessions[1]["usage"]["inputTokens"] > 0 and sessions[1]["usage"]["outputTokens"] > 0
    assert sessions[2]["usage"] == {}  # no turn yet
    created = [datetime.fromisoformat(s["createdAt"].replace("Z", "+00:00")) for s in sessions]
    assert created == sorted(created, reverse=True)
    assert all(s["createdAt"].endswith("Z") for s in sessions)


def test_a_session_waiting_for_an_approval_says_so_and_previews_its_first_message(api: Harness) -> None:
    long = "/call send_alert " + '{"city": "Oslo", "message": "' + "snow " * 30 + '"}'
    waiting = api.create(long)
    api.wait_for(waiting, "input.requested")
    (listed,) = api.client.get(PATH).json()["sessions"]
    assert listed["state"] == "waiting-for-input"
    assert listed["preview"].startswith("/call send_alert {") and listed["preview"].endswith("…")
    assert len(listed["preview"]) == 80


def test_a_session_of_an_earlier_run_is_dormant(api: Harness) -> None:
    import time

    session_id = api.create("hi")
    api.wait_for(session_id, "session.waiting")
    api.runtime.availability.dormant_before = time.time() + 60  # as `eve dev` without --resume sees it
    assert [s["state"] for s in api.client.get(PATH).json()["sessions"]] == ["dormant"]


def test_a_running_turn_lists_as_running(api: Harness) -> None:
    session_id = api.create("/delay 2000\n/reply slowly")
    api.wait_for(session_id, "turn.started")
    assert [s["state"] for s in api.client.get(PATH).json()["sessions"]] == ["running"]


def test_an_empty_store_lists_nothing(api: Harness) -> None:
    assert api.client.get(PATH).json() == {"ok": True, "sessions": []}


def test_is_guarded_like_the_api(agent: RuntimeAgent, manifest: Manifest) -> None:
    with harness(
        agent, manifest, auth=LoopbackAuth(), client=("203.0.113.7", 1), base_url="http://127.0.0.1:2000"
    ) as h:
        assert h.client.get(PATH).status_code == 403


def test_production_has_no_such_route(agent: RuntimeAgent, manifest: Manifest) -> None:
    with harness(agent, manifest, mode="production") as h:
        h.create("hello")
        response = h.client.get(PATH)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert PATH not in openapi_document(mode="production", max_body_bytes=MAX_BODY_BYTES)["paths"]
    assert PATH in openapi_document(mode="development", max_body_bytes=MAX_BODY_BYTES)["paths"]


def test_dev_build_reports_the_serving_generation_and_failed_rebuilds(agent: RuntimeAgent, manifest: Manifest) -> None:
    from eve_runtime.diagnostics import Diagnostic

    with harness(agent, manifest) as h:
        first = h.client.get("/eve/v1/dev/build").json()
        assert first == {"ok": True, "generation": 0, "rebuilds": 0, "status": "ready", "diagnostics": []}
        broken = manifest.model_copy(
            update={
                "diagnostics": [
                    Diagnostic(code="discover/x", severity="error", message="bad tool", source_path="tools/x.py")
                ]
            }
        )
        h.app.state.show_build(manifest, failed=broken, generation=2)
        failed = h.client.get("/eve/v1/dev/build").json()
        assert (failed["generation"], failed["rebuilds"], failed["status"]) == (0, 1, "failed")
        assert failed["diagnostics"][0]["message"] == "bad tool"
        h.app.state.show_build(manifest, generation=3)
        assert h.client.get("/eve/v1/dev/build").json()["generation"] == 3
    with harness(agent, manifest, mode="production") as h:
        assert h.client.get("/eve/v1/dev/build").status_code == 404
    assert "/eve/v1/dev/build" in openapi_document(mode="development", max_body_bytes=MAX_BODY_BYTES)["paths"]
