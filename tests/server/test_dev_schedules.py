"""`POST /eve/v1/dev/schedules/{scheduleId}`: fire a schedule once, by hand, under `eve dev` only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.auth import LoopbackAuth
from tests.helpers import write_app
from tests.server.support import Harness, harness, scaffold_app

PATH = "/eve/v1/dev/schedules"

NESTED = {
    "agent/schedules/billing/sweep.md": "---\ncron: '0 3 * * *'\n---\n/reply swept\n",
    "agent/schedules/broken.py": (
        "from eve_runtime import define_schedule\n\n\n"
        "def broken(ctx):\n"
        '    raise RuntimeError("no luck")\n\n\n'
        'schedule = define_schedule(cron="0 3 * * *", run=broken)\n'
    ),
}


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CompiledApp]:
    root = scaffold_app(tmp_path_factory.mktemp("schedules") / "app")
    write_app(root.parent, NESTED, name=root.name)
    built = compile_app(root, write=False)
    assert built.ok and built.root is not None, built.diagnostics
    yield built
    built.loader.release()


def test_fires_the_schedule_and_answers_the_sessions_it_started(api: Harness) -> None:
    response = api.client.post(f"{PATH}/weekly-outlook")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert (body["ok"], body["scheduleId"]) == (True, "weekly-outlook")
    (session_id,) = body["sessionIds"]
    events = api.wait_for(session_id, "session.completed")
    started = next(e for e in events if e["type"] == "session.started")
    assert started["data"]["schedule"]["name"] == "weekly-outlook"
    assert started["data"]["schedule"]["manual"] is True
    message = next(e for e in events if e["type"] == "message.received")["data"]["message"]
    assert message.startswith("Look up the weather in Paris")
    again = api.client.post(f"{PATH}/weekly-outlook").json()["sessionIds"]
    assert again != [session_id]  # each fire by hand is a new session


def test_an_unknown_schedule_is_404_with_the_available_ones(api: Harness) -> None:
    response = api.client.post(f"{PATH}/nightly")
    assert response.status_code == 404
    body = response.json()
    assert body["ok"] is False and body["code"] == "schedule_not_found"
    assert body["availableScheduleIds"] == ["weekly-outlook"]
    assert "'nightly'" in body["error"] and "weekly-outlook" in body["error"]


def test_a_nested_name_is_reached_with_or_without_escaping_its_slash(nested: CompiledApp) -> None:
    assert nested.root is not None
    with harness(nested.root, nested.manifest) as h:
        for path in (f"{PATH}/billing/sweep", f"{PATH}/billing%2Fsweep"):
            response = h.client.post(path)
            assert response.status_code == 200, response.text
            assert response.json()["scheduleId"] == "billing/sweep"
            (session_id,) = response.json()["sessionIds"]
            h.wait_for(session_id, "session.completed")


def test_a_failing_run_handler_is_a_json_500_naming_it(nested: CompiledApp) -> None:
    assert nested.root is not None
    with harness(nested.root, nested.manifest) as h:
        response = h.client.post(f"{PATH}/broken")
    assert response.status_code == 500
    body = response.json()
    assert (body["ok"], body["code"]) == (False, "schedule_failed")
    assert "broken" in body["error"] and "no luck" in body["error"]


def test_is_guarded_like_the_api(agent: RuntimeAgent, manifest: Manifest) -> None:
    with harness(
        agent, manifest, auth=LoopbackAuth(), client=("203.0.113.7", 1), base_url="http://127.0.0.1:2000"
    ) as h:
        assert h.client.post(f"{PATH}/weekly-outlook").status_code == 403


def test_production_has_no_such_route(agent: RuntimeAgent, manifest: Manifest, tmp_path: Path) -> None:
    with harness(agent, manifest, mode="production") as h:
        response = h.client.post(f"{PATH}/weekly-outlook")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
