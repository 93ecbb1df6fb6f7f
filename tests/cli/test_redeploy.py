"""A redeploy through real `eve start` processes: the app's code changes between two runs.

An idle session moves to the new build on its next message (new tool code, state the new code
no longer defines dropped and logged); the session record names the build it runs on.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.test_serve import TOKEN, serving
from tests.helpers import write_files
from tests.server.support import parse_ndjson, scaffold_app

pytestmark = pytest.mark.scenario

HEADERS = {"authorization": f"Bearer {TOKEN}"}

VISIT = '''
from eve_runtime import define_state

visits = define_state("visits", lambda: 0)
{extra}

def visit() -> int:
    """Count a visit."""
    {touch}
    return visits.update(lambda n: n + 1)
'''

WEATHER = '''
def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {{"city": city, "condition": "{condition}"}}
'''


def events(http: httpx.Client, sid: str) -> list[dict[str, Any]]:
    response = http.get(f"/eve/v1/session/{sid}/stream?follow=false")
    assert response.status_code == 200, response.text
    return parse_ndjson(response.content)


def converse(http: httpx.Client, sid: str | None, message: str, turns: int) -> tuple[str, list[dict[str, Any]]]:
    """Send a message (creating the session when `sid` is None) and wait for its turn to end."""
    if sid is None:
        response = http.post("/eve/v1/session", json={"message": message})
        sid = str(response.json()["sessionId"])
    else:
        response = http.post(f"/eve/v1/session/{sid}", json={"message": message})
    assert response.status_code == 202, response.text
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        seen = events(http, sid)
        if sum(e["type"] == "session.waiting" for e in seen) >= turns:
            return sid, seen
        time.sleep(0.05)
    raise AssertionError(f"no end of turn {turns}: {[e['type'] for e in events(http, sid)]}")


def recorded_build(app: Path, sid: str) -> str:
    with contextlib.closing(sqlite3.connect(app / ".eve" / "workflow-data" / "eve.sqlite3")) as db:
        return str(db.execute("SELECT deployment FROM sessions WHERE id = ?", (sid,)).fetchone()[0])


def built(app: Path) -> str:
    return str(json.loads((app / ".eve" / "compile" / "compile-metadata.json").read_text())["contentHash"])


def test_an_idle_session_moves_to_the_redeployed_code_on_its_next_message(tmp_path: Path) -> None:
    app = scaffold_app(tmp_path / "weather-agent")
    write_files(
        app,
        {
            "agent/tools/visit.py": VISIT.format(
                extra='legacy = define_state("legacy", lambda: 0)', touch="legacy.update(lambda n: n + 1)"
            ),
            "agent/tools/get_weather.py": WEATHER.format(condition="Sunny"),
        },
    )
    env = {"EVE_AUTH_TOKEN": TOKEN}
    with serving(app, "start", env=env) as server, httpx.Client(base_url=server.url, headers=HEADERS) as http:
        sid, _ = converse(http, None, "/call visit {}", 1)
        server.stop()
    first = built(app)
    assert recorded_build(app, sid) == first

    write_files(  # the redeploy: new tool code, and the `legacy` state is gone
        app,
        {
            "agent/tools/visit.py": VISIT.format(extra="", touch="pass"),
            "agent/tools/get_weather.py": WEATHER.format(condition="Rainy"),
        },
    )
    with serving(app, "start", env=env) as server, httpx.Client(base_url=server.url, headers=HEADERS) as http:
        assert recorded_build(app, sid) == first  # a restart alone moves nothing
        _, seen = converse(http, sid, '/call visit {}\n/call get_weather {"city":"Paris"}', 2)
        server.stop()
    second = built(app)
    assert second != first and recorded_build(app, sid) == second
    results = [e["data"]["result"]["output"] for e in seen if e["type"] == "action.result"]
    assert results[0] == 1  # the second turn's two calls run at once: their results come as they finish
    assert sorted(results[1:], key=str) == [2, {"city": "Paris", "condition": "Rainy"}]  # `visits` kept its value
    assert [e["type"] for e in seen].count("session.started") == 1  # one session, one stream
    assert "dropped state 'legacy' on handoff" in server.stderr
    assert f"moved from deployment {first.removeprefix('sha256:')[:12]}" in server.stderr
    assert server.returncode == 0
