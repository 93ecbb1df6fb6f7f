"""`eve dev` as a real process: hot reload on save, broken saves, and one server per app."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from eve_runtime.serving.dev_server import STATE_FILE, read_record, running_server
from tests.cli.test_serve import _eve, serving
from tests.server.support import scaffold_app

pytestmark = pytest.mark.scenario

TOOL = '''
import asyncio

async def version() -> str:
    """Say which version of the code runs."""
    await asyncio.sleep({delay})
    return "{label}"
'''


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = scaffold_app(tmp_path / "weather-agent")
    (root / "agent" / "tools" / "version.py").write_text(TOOL.format(label="v1", delay=0))
    return root


def turn(http: httpx.Client, session: str | None, message: str) -> tuple[str, list[dict[str, Any]]]:
    """Send a message (a new session when `session` is None) and wait for its turn to end."""
    if session is None:
        session = str(http.post("/eve/v1/session", json={"message": message}).json()["sessionId"])
        before = 0
    else:
        before = len(read(http, session))
        assert http.post(f"/eve/v1/session/{session}", json={"message": message}).status_code == 202
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        events = read(http, session)[before:]
        if any(e["type"] == "session.waiting" for e in events):
            return session, events
        time.sleep(0.05)
    raise AssertionError(f"the turn did not end: {[e['type'] for e in read(http, session)[before:]]}")


def read(http: httpx.Client, session: str) -> list[dict[str, Any]]:
    response = http.get(f"/eve/v1/session/{session}/stream", params={"follow": "false"})
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def result(events: list[dict[str, Any]]) -> Any:
    return next(e["data"]["result"]["output"] for e in events if e["type"] == "action.result")


def wait_for_info(http: httpx.Client, ready: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        info = http.get("/eve/v1/info").json()
        if ready(info):
            return dict(info)
        time.sleep(0.05)
    raise AssertionError("the server never showed the expected build")


def tool_names(info: dict[str, Any]) -> list[str]:
    return [t["name"] for t in info["tools"]["static"]]


def test_saves_reload_the_agent_and_a_broken_save_keeps_the_last_good_one(app: Path) -> None:
    tool = app / "agent" / "tools" / "version.py"
    with serving(app, "dev", "--no-ui") as server, httpx.Client(base_url=server.url, timeout=10) as http:
        session, events = turn(http, None, "/call version {}")
        assert result(events) == "v1"
        # a slow turn on v1-slow is running when the tool is saved as v2: it finishes on v1-slow,
        # and the next turn runs v2
        tool.write_text(TOOL.format(label="v1-slow", delay=1.5))
        (app / "agent" / "tools" / "extra.py").write_text('def extra() -> str:\n    """Extra."""\n    return "x"\n')
        wait_for_info(http, lambda info: "extra" in tool_names(info))
        before = len(read(http, session))
        assert http.post(f"/eve/v1/session/{session}", json={"message": "/call version {}"}).status_code == 202
        while not any(e["type"] == "actions.requested" for e in read(http, session)[before:]):
            time.sleep(0.02)
        tool.write_text(TOOL.format(label="v2", delay=0))
        (app / "agent" / "tools" / "extra.py").unlink()
        wait_for_info(http, lambda info: "extra" not in tool_names(info))
        while not any(e["type"] == "session.waiting" for e in read(http, session)[before:]):
            time.sleep(0.02)  # the slow turn ends first (a message now would steer it, on its own code)
        _, events = turn(http, session, "/call version {}")
        outputs = [e["data"]["result"]["output"] for e in read(http, session)[before:] if e["type"] == "action.result"]
        assert outputs == ["v1-slow", "v2"]
        # a broken save: the error shows in info, and turns go on with the last good code
        tool.write_text("def version(:\n")
        wait_for_info(http, lambda info: info["diagnostics"]["discoveryErrors"] > 0)
        entry = http.get("/eve/v1/dev/build").json()["diagnostics"][0]  # info counts them, the build names them
        assert entry["sourcePath"].endswith("version.py") and entry["line"] == 1
        _, events = turn(http, session, "/call version {}")
        assert result(events) == "v2"
        tool.write_text(TOOL.format(label="v3", delay=0))
        wait_for_info(http, lambda info: info["diagnostics"]["discoveryErrors"] == 0)
        _, events = turn(http, session, "/call version {}")
        assert result(events) == "v3"
        server.stop()
    assert "reloaded: generation" in server.stderr
    assert "keeps serving until they are fixed" in server.stderr
    assert server.returncode == 0


def test_a_second_eve_dev_uses_the_running_server(app: Path) -> None:
    with serving(app, "dev", "--no-ui") as server:
        record = read_record(app)
        assert record is not None and record.url == server.url
        second = _eve(app, "dev", "--no-ui", "--port", "0")
        assert second.returncode == 0
        assert f"already running for this app: {server.url}" in second.stdout
        server.stop()
    assert not (app / STATE_FILE).exists()  # removed on a clean stop


def test_a_stale_record_is_replaced(app: Path) -> None:
    (app / STATE_FILE).parent.mkdir(parents=True, exist_ok=True)
    stale = {"url": "http://127.0.0.1:9", "pid": 999999, "startedAt": "2026-01-01T00:00:00+00:00", "version": "0"}
    (app / STATE_FILE).write_text(json.dumps(stale))
    with serving(app, "dev", "--no-ui") as server:
        record = read_record(app)
        assert record is not None and record.url == server.url
        server.stop()
    assert server.returncode == 0


def test_a_broken_agent_serves_its_diagnostics_until_a_save_fixes_it(app: Path) -> None:
    tool = app / "agent" / "tools" / "version.py"
    tool.write_text("def version(:\n")
    with serving(app, "dev", "--no-ui") as server, httpx.Client(base_url=server.url, timeout=10) as http:
        health = http.get("/eve/v1/health")
        assert health.status_code == 503
        body = health.json()
        assert (body["ok"], body["status"], body["code"]) == (False, "failed", "agent_has_errors")
        assert body["diagnostics"][0]["sourcePath"].endswith("version.py")
        assert running_server(app) is not None, "a second eve dev attaches to it rather than starting another"
        refused = http.post("/eve/v1/session", json={"message": "hello"})
        assert refused.status_code == 409
        error = refused.json()
        assert (error["ok"], error["code"]) == (False, "agent_has_errors")
        assert "fix them and save" in error["error"] and "First: agent/tools/version.py:1: " in error["error"]
        assert error["diagnostics"][0]["line"] == 1
        build = http.get("/eve/v1/dev/build").json()
        assert (build["status"], build["serving"], build["rebuilds"]) == ("failed", False, 0)
        page = http.get("/")  # the web inspector shows the errors too
        assert page.status_code == 200 and "content-security-policy" in page.headers
        tool.write_text("def version(::\n")  # still broken: the newest build's diagnostics are served
        deadline = time.monotonic() + 20
        while http.get("/eve/v1/dev/build").json()["rebuilds"] == 0:
            assert time.monotonic() < deadline, "the broken save was not rebuilt"
            time.sleep(0.05)
        tool.write_text(TOOL.format(label="fixed", delay=0))
        while http.get("/eve/v1/health").status_code != 200:
            assert time.monotonic() < deadline + 20, "the fix was not picked up"
            time.sleep(0.05)
        build = http.get("/eve/v1/dev/build").json()
        assert build["status"] == "ready" and build["rebuilds"] == 2 and "serving" not in build
        _, events = turn(http, None, "/call version {}")
        assert result(events) == "fixed"
        server.stop()
    assert "cannot run it yet" in server.stderr and "the agent compiles now" in server.stderr
    assert server.returncode == 0
