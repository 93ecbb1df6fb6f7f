"""eve's own TypeScript client (`eve/client`, npm `eve` 0.80.1) against `eve start` serving the template app.

`scenarios.mjs` runs every scenario in one node process; each test here checks one scenario's
line. Node 24 and the package come from the npm registry on first use (`tests/interop/node_env.py`,
cached outside the repo); without them these tests are skipped, saying why. `make interop` runs
only these.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.ids import new_session_id
from eve_runtime.store.base import SessionRecord
from eve_runtime.store.sqlite import SqliteStore
from tests.cli.test_serve import serving
from tests.helpers import write_events
from tests.interop.node_env import NodeUnavailable, ensure
from tests.server.support import scaffold_app

pytestmark = [pytest.mark.scenario, pytest.mark.xdist_group("interop")]  # one node run, on one worker

SCRIPT = Path(__file__).with_name("scenarios.mjs")
TOKEN = "interop-token-0123456789abcdef"
BOB = "interop-bob-0123456789abcdef"
PEOPLE_CHANNEL = f"""
from eve_runtime.channels import Principal, eve_channel

PEOPLE = {{"Bearer {TOKEN}": "alice", "Bearer {BOB}": "bob"}}


def people(request):
    name = PEOPLE.get(request.headers.get("authorization", ""))
    return Principal(name, "user", "people") if name else None


channel = eve_channel(auth=[people])
"""
"""The app's `channels/eve.py`: the interop token is alice's, and bob has one of his own."""
TEMPLATE_CALLS = {
    "weather": '/call get_weather {"city": "Paris"}',
    "approval": '/call send_alert {"city": "Paris", "message": "Storm at noon."}',
    "subagent": '/call forecaster {"message": "/reply Sunny all week."}',
}
SCENARIOS = [
    "health",
    "info",
    "streaming_and_reducers",
    "follow_ups",
    "tools",
    "approval_approve",
    "approval_deny",
    "approval_invalid",
    "approval_unknown_request",
    "approval_override_by_message",
    "create_background_mode",
    "stranded_session",
    "reconnect_by_cursor",
    "cancel",
    "controls",
    "subagents",
    "eve_agent_store",
    "file_parts",
    "bearer_auth",
    "trace",
    "two_people",
]


def run_scenarios(
    host: str,
    *,
    token: str | None,
    app: dict[str, str],
    serial: bool = False,
    stranded: str | None = None,
    people: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run `scenarios.mjs` once against `host` (all at once, or one by one); each scenario's line by name.

    `stranded`: the id of a session another eve version wrote, on a server that has one.
    """
    env = ensure()
    config: dict[str, Any] = {"host": host, "token": token, "modules": str(env.modules), "app": app, "serial": serial}
    if stranded is not None:
        config["stranded"] = stranded
    if people is not None:
        config["people"] = people
    if serial:
        config["timeoutMs"] = 60_000
    done = subprocess.run(
        [str(env.node), str(SCRIPT)],
        env={**os.environ, "EVE_INTEROP": json.dumps(config)},
        capture_output=True,
        text=True,
        timeout=1200 if serial else 120,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise AssertionError(f"node exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return {line["name"]: line for line in lines}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    try:
        ensure()
    except NodeUnavailable as exc:
        pytest.skip(f"eve's TypeScript client is not available here: {exc}")
    app = scaffold_app(tmp_path_factory.mktemp("interop") / "weather-agent")
    stranded = asyncio.run(_stranded_session(app))
    (app / "agent/channels/eve.py").write_text(PEOPLE_CHANNEL)
    with serving(app, "start", env={"EVE_AUTH_TOKEN": TOKEN}) as server:
        yield run_scenarios(server.url, token=TOKEN, app=TEMPLATE_CALLS, stranded=stranded, people={"bob": BOB})
        server.stop()


async def _stranded_session(app: Path) -> str:
    """A session of the app's store that another eve version wrote, with a recorded turn (before the server starts)."""
    store = SqliteStore(app / ".eve" / "workflow-data")
    await store.open()
    try:
        record = SessionRecord(id=new_session_id(), agent="weather-agent", created_at=time.time(), eve_version="0.0.1")
        session, _created = await store.create_session(record)
        turn = {"sequence": 0, "turnId": "turn_0"}
        await write_events(
            store,
            session.id,
            [
                ("session.started", {"runtime": {"agentId": "weather-agent", "eveVersion": "0.0.1"}}),
                ("turn.started", turn),
                ("message.received", {"message": "before the upgrade", "parts": [], **turn}),
                ("message.completed", {"finishReason": "stop", "message": "noted", "stepIndex": 0, **turn}),
                ("turn.completed", turn),
                ("session.waiting", {"continuationToken": session.id, "wait": "next-user-message"}),
            ],
        )
        return session.id
    finally:
        await store.close()


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_passes(results: dict[str, dict[str, Any]], name: str) -> None:
    line = results.get(name)
    assert line is not None, f"{name} never reported"
    assert line["ok"], line.get("error")


def test_every_scenario_is_checked(results: dict[str, dict[str, Any]]) -> None:
    assert sorted(results) == sorted(SCENARIOS)


def test_info_differs_from_the_client_schema_only_in_version(results: dict[str, dict[str, Any]]) -> None:
    detail = results["info"]["detail"]
    assert detail["version"] == 6
    assert [issue.split(":")[0] for issue in detail["issues"]] == ["version"]  # 0.80.1 insists on 5


def test_bearer_auth_refuses_without_the_token(results: dict[str, dict[str, Any]]) -> None:
    assert results["bearer_auth"]["detail"] == {"health": "ready", "none": 401, "wrong": 401}


def test_the_subagent_replied_through_its_own_stream(results: dict[str, dict[str, Any]]) -> None:
    assert results["subagents"]["detail"]["child"] == "Sunny all week."


def test_a_stranded_sessions_end_reads_as_the_docs_say(results: dict[str, dict[str, Any]]) -> None:
    detail = results["stranded_session"]["detail"]
    ended = {key: detail[key] for key in ("refused", "last", "code", "trigger")}
    assert ended == {"refused": 409, "last": "session.failed", "code": "session_stranded", "trigger": "reset"}


def test_a_withdrawn_approval_keeps_the_denials_code(results: dict[str, dict[str, Any]]) -> None:
    detail = results["approval_override_by_message"]["detail"]
    ignored = "Ignored because the user continued without responding."
    assert (detail["code"], detail["message"]) == ("TOOL_EXECUTION_DENIED", ignored)


def test_the_model_saw_the_file_parts(results: dict[str, dict[str, Any]]) -> None:
    detail = results["file_parts"]["detail"]
    assert detail["parts"][1] == {"type": "file", "mediaType": "text/plain", "filename": "notes.txt", "size": 18}
    assert "t.csv (text/csv, 8 bytes)" in detail["reply"]  # the test model describes the parts it got


def test_two_people_share_a_session(results: dict[str, dict[str, Any]]) -> None:
    assert results["two_people"]["detail"] == {"responder": "alice", "turns": ["turn_0", "turn_1"]}


def test_the_trace_has_eves_keys(results: dict[str, dict[str, Any]]) -> None:
    keys = ["decision", "spanId", "traceFlags", "traceId"]
    assert results["trace"]["detail"] == {"keys": keys, "honoured": True}  # the original's eve dev: False
