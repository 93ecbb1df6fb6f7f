"""`eve start` and `eve dev` as real processes on port 0: listening line, requests, SIGTERM, exit codes."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from eve_cli.main import app as cli
from tests.server.support import WEATHER_CALL, scaffold_app

pytestmark = pytest.mark.scenario

LISTENING = re.compile(r"^eve listening on http://127\.0\.0\.1:(\d+)$")
TOKEN = "cli-test-token-0123456789"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return scaffold_app(tmp_path / "weather-agent")


def _environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVE_AUTH_TOKEN", "PORT", "EVE_WORLD", "EVE_DATABASE_URL")}
    env.update(extra or {})
    return env


def _eve(
    app: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eve_cli", *args],
        cwd=app,
        env=_environment(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    stdout_rest: str = ""
    """What the server printed on stdout after its listening line."""
    stderr: str = ""
    returncode: int | None = None

    def stop(self) -> None:
        """SIGTERM, then wait for the exit."""
        self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=30)
        self.stdout_rest, self.stderr = out.decode(), err.decode()
        self.returncode = self.process.returncode


@contextmanager
def serving(app: Path, *args: str, env: Mapping[str, str] | None = None) -> Iterator[Server]:
    process = subprocess.Popen(
        [sys.executable, "-m", "eve_cli", *args, "--port", "0"],
        cwd=app,
        env=_environment(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered bytes: reading the listening line leaves what follows it in the pipe
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline().decode().rstrip("\n") if ready else ""
        match = LISTENING.match(line)
        if match is None:
            process.kill()
            _out, err = process.communicate(timeout=30)
            raise AssertionError(f"no listening line (got {line!r}); stderr:\n{err.decode()}")
        server = Server(process, f"http://127.0.0.1:{match.group(1)}")
        yield server
        if server.returncode is None:
            server.stop()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def _converse(url: str, headers: Mapping[str, str]) -> list[dict[str, Any]]:
    """Create a session with a tool call and read the stream (bounded) once the turn is done."""
    with httpx.Client(base_url=url, headers=dict(headers), timeout=10) as http:
        assert http.get("/eve/v1/health").json()["status"] == "ready"
        created = http.post("/eve/v1/session", json={"message": WEATHER_CALL})
        assert created.status_code == 202, created.text
        session_id = created.json()["sessionId"]
        with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as live:  # ends at session.waiting here
            for line in live.iter_lines():
                if line and json.loads(line)["type"] == "session.waiting":
                    break
        bounded = http.get(f"/eve/v1/session/{session_id}/stream?follow=false")
        assert bounded.status_code == 200
        assert bounded.content.startswith(b"\n")
        events = [json.loads(line) for line in bounded.content.splitlines() if line]
        assert int(bounded.headers["x-eve-stream-tail-index"]) == len(events) - 1  # the last event read from 0
        return events


def test_start_serves_and_stops_cleanly(app: Path) -> None:
    with serving(app, "start", env={"EVE_AUTH_TOKEN": TOKEN}) as server:
        events = _converse(server.url, {"authorization": f"Bearer {TOKEN}"})
        assert events[-1]["type"] == "session.waiting"
        reply = next(e for e in events if e["type"] == "message.completed")
        assert reply["data"]["message"] == 'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}'
        unauthorized = httpx.post(f"{server.url}/eve/v1/session", json={"message": "hi"})
        assert unauthorized.status_code == 401
        server.stop()
    assert server.returncode == 0, server.stderr
    assert server.stdout_rest == ""  # exactly one line on stdout
    assert "EVE_AUTH_TOKEN is not set" not in server.stderr
    assert TOKEN not in server.stderr


def test_start_without_a_token_warns_and_answers_401(app: Path) -> None:
    with serving(app, "start") as server:
        response = httpx.post(f"{server.url}/eve/v1/session", json={"message": "hi"})
        assert response.status_code == 401
        assert "EVE_AUTH_TOKEN" in response.json()["error"]
        assert httpx.get(f"{server.url}/eve/v1/health").status_code == 200
        server.stop()
    assert server.returncode == 0
    assert "EVE_AUTH_TOKEN is not set" in server.stderr


def test_dev_without_ui_serves_loopback_without_a_token(app: Path) -> None:
    with serving(app, "dev", "--no-ui") as server:
        events = _converse(server.url, {})
        assert events[0]["type"] == "session.started"
        info = httpx.get(f"{server.url}/eve/v1/info").json()
        assert info["mode"] == "development"
        server.stop()
    assert server.returncode == 0, server.stderr
    assert server.stdout_rest == f"eve inspector at {server.url}/\n"  # the web inspector's link, after the line


def test_sessions_survive_a_restart(app: Path) -> None:
    with serving(app, "dev", "--no-ui") as server:
        session_id = httpx.post(f"{server.url}/eve/v1/session", json={}).json()["sessionId"]
        server.stop()
    with serving(app, "dev", "--no-ui", "--resume") as server:
        response = httpx.post(f"{server.url}/eve/v1/session/{session_id}", json={"message": "still there?"})
        assert response.status_code == 202
        server.stop()
    assert server.returncode == 0


def test_without_resume_an_earlier_runs_sessions_are_dormant(app: Path) -> None:
    with serving(app, "dev", "--no-ui") as server:
        session_id = httpx.post(f"{server.url}/eve/v1/session", json={"message": "hi"}).json()["sessionId"]
        server.stop()
    with serving(app, "dev", "--no-ui") as server:
        response = httpx.post(f"{server.url}/eve/v1/session/{session_id}", json={"message": "still there?"})
        assert response.status_code == 409
        assert response.json()["code"] == "session_dormant"
        assert "eve dev --resume" in response.json()["error"]
        stream = httpx.get(f"{server.url}/eve/v1/session/{session_id}/stream?follow=false")
        assert stream.status_code == 200 and b"session.waiting" in stream.content
        assert httpx.post(f"{server.url}/eve/v1/session", json={"message": "new"}).status_code == 202
        server.stop()
    with serving(app, "start", env={"EVE_AUTH_TOKEN": TOKEN}) as server:  # eve start resumes everything
        headers = {"authorization": f"Bearer {TOKEN}"}
        response = httpx.post(
            f"{server.url}/eve/v1/session/{session_id}", json={"message": "and now?"}, headers=headers
        )
        assert response.status_code == 202
        server.stop()


def test_a_second_server_on_the_same_app_is_refused(app: Path) -> None:
    with serving(app, "start") as server:
        second = _eve(app, "start", "--port", "0")
        assert second.returncode == 1
        assert "already open in another process" in second.stderr
        assert second.stdout == ""
        server.stop()
    assert server.returncode == 0


@pytest.mark.parametrize(
    ("args", "env"),
    [(["--world", "postgres"], {}), ([], {"EVE_WORLD": "postgres"})],
    ids=["flag", "environment"],
)
def test_the_postgres_world_without_a_database_url_exits_1(app: Path, args: list[str], env: dict[str, str]) -> None:
    result = _eve(app, "start", "--port", "0", *args, env=env)
    assert result.returncode == 1
    assert "needs a database: pass --database-url" in " ".join(result.stderr.split())
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("token", "env_file", "fragment"),
    [
        ("x", False, "too short: 1 characters"),
        ("0123456789abcde", False, "too short: 15 characters"),
        (" " + "a" * 32, False, "whitespace"),
        ("a" * 32 + "\n", True, "whitespace"),
        ("\t" * 20, False, "whitespace"),
    ],
    ids=["one character", "fifteen", "leading space", "trailing newline in .env", "only tabs"],
)
def test_start_refuses_a_weak_or_padded_token(app: Path, token: str, env_file: bool, fragment: str) -> None:
    env: dict[str, str] = {}
    if env_file:
        (app / ".env").write_text(f'EVE_AUTH_TOKEN="{token}"\n')
    else:
        env["EVE_AUTH_TOKEN"] = token
    result = _eve(app, "start", "--port", "0", env=env)
    message = " ".join(result.stderr.split())
    assert result.returncode == 1, result.stderr
    assert fragment in message and "openssl rand -hex 16" in message
    assert "Traceback" not in result.stderr and result.stdout == ""
    if len(token.strip()) >= 8:
        assert token.strip() not in result.stderr  # the token itself is never shown
    assert not (app / ".eve" / "workflow-data").exists()  # refused before the store was opened


def test_dev_accepts_any_token(app: Path) -> None:
    """`eve dev` does not use the token (loopback only), so a short one is no reason to refuse."""
    with serving(app, "dev", "--no-ui", env={"EVE_AUTH_TOKEN": "x"}) as server:
        assert httpx.get(f"{server.url}/eve/v1/health", timeout=10).status_code == 200
        server.stop()
    assert server.returncode == 0


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["start", "--world", "nope"], {}),
        (["start"], {"EVE_WORLD": "nope"}),
        (["start", "--port", "70000"], {}),
        (["dev", "--no-ui"], {"PORT": "abc"}),
        (["dev", "--no-ui"], {"PORT": "99999"}),
    ],
)
def test_usage_errors_exit_2(
    app: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]
) -> None:
    monkeypatch.chdir(app)
    result = runner.invoke(cli, args, env=env)
    assert result.exit_code == 2, result.output


def test_a_broken_project_exits_1_with_its_diagnostics(app: Path) -> None:
    (app / "agent" / "instructions.md").unlink()
    result = _eve(app, "start", "--port", "0")
    assert result.returncode == 1
    assert "instructions" in result.stderr.lower()
    assert "cannot be served" in " ".join(result.stderr.split())


def test_outside_an_app_exits_1(tmp_path: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["dev", "--no-ui", "--port", "0"])
    assert result.exit_code == 1
    assert "No eve app found" in " ".join(result.output.split())


def test_a_busy_port_is_a_clear_error() -> None:
    from eve_runtime.serving.serve import ServeError, _bind

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ServeError, match="Choose another with --port"):
            _bind("127.0.0.1", port)


def test_listening_line() -> None:
    from eve_runtime.serving.serve import listening_line

    assert listening_line("127.0.0.1", 3000) == "eve listening on http://127.0.0.1:3000"
    assert listening_line("::1", 2000) == "eve listening on http://[::1]:2000"
