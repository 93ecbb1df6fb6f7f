"""A store that cannot take work answers 503 `store_unavailable` with `Retry-After`, and health says `degraded`."""

from __future__ import annotations

from pathlib import Path

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store import SqliteStore
from eve_runtime.store.sqlite import free_megabytes
from tests.server.support import harness


def test_under_the_free_space_floor_new_work_is_503_and_health_is_degraded(
    agent: RuntimeAgent, manifest: Manifest, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "data")
    with harness(agent, manifest, store=store) as api:
        session_id = api.create("/reply hello")
        api.wait_for(session_id, "session.waiting")
        assert api.client.get("/eve/v1/health").json()["status"] == "ready"
        store.min_free_mb = free_megabytes(tmp_path) + 1024  # the disk is (as good as) full
        answers = [
            api.client.post("/eve/v1/session", json={"message": "hi"}),
            api.client.post(f"/eve/v1/session/{session_id}", json={"message": "again", "idempotencyKey": "k1"}),
        ]
        for answer in answers:
            assert answer.status_code == 503, answer.text
            body = answer.json()
            assert body["ok"] is False and body["code"] == "store_unavailable"
            assert int(answer.headers["retry-after"]) > 0
            assert str(tmp_path) not in answer.text  # no path of the server's in the answer
        health = api.client.get("/eve/v1/health")
        assert health.status_code == 503 and health.json()["status"] == "degraded"
        assert "EVE_MIN_FREE_MB" in health.json()["reason"] and health.headers["retry-after"]
        assert api.client.head("/eve/v1/health").status_code == 503
        stream = api.client.get(f"/eve/v1/session/{session_id}/stream?follow=false")
        assert stream.status_code == 200  # reading what is stored still works
        store.min_free_mb = 0  # space again
        again = api.client.post(
            f"/eve/v1/session/{session_id}", json={"message": "/reply again", "idempotencyKey": "k1"}
        )
        assert again.status_code == 202
        events = api.wait_for(session_id, "session.waiting", count=2)
        assert [e["data"]["message"] for e in events if e["type"] == "message.completed"] == ["hello", "again"]
        assert api.client.get("/eve/v1/health").json()["status"] == "ready"


def test_a_message_stored_but_refused_runs_when_its_key_is_sent_again(agent: RuntimeAgent, manifest: Manifest) -> None:
    from eve_runtime.store import NewDelivery

    with harness(agent, manifest) as api:
        session_id = api.create("/reply one")
        api.wait_for(session_id, "session.waiting")
        # What a send whose connection was lost after its commit leaves: stored, answered 503, nobody woken.
        stored = NewDelivery(id="dlv_lost", kind="message", payload={"message": "/reply two"}, idempotency_key="k2")
        api.call(api.store.enqueue, session_id, stored)
        again = api.client.post(f"/eve/v1/session/{session_id}", json={"message": "/reply two", "idempotencyKey": "k2"})
        assert again.status_code == 202 and again.json()["deliveryId"] == "dlv_lost"
        events = api.wait_for(session_id, "session.waiting", count=2)
        assert [e["data"]["message"] for e in events if e["type"] == "message.completed"] == ["one", "two"]
