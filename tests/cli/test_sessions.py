"""`eve send` and `eve sessions list|show|stream` against a real `eve dev --no-ui` process."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from eve_cli.main import app as cli
from eve_runtime.project.compiler import compile_app
from eve_runtime.server.auth import BearerTokenAuth
from eve_runtime.serving.dev_server import write_record
from tests.cli.test_serve import Server, _eve, serving
from tests.server.support import LiveServer, scaffold_app

pytestmark = pytest.mark.scenario

ALERT = '/call send_alert {"city": "Paris", "message": "Storm tonight"}'
SESSION_LINE = re.compile(r"session (wrun_\w+)")


@pytest.fixture(scope="module")
def dev_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Server]]:
    """One app with `eve dev --no-ui` running for the whole module."""
    root = scaffold_app(tmp_path_factory.mktemp("sessions") / "weather-agent")
    with serving(root, "dev", "--no-ui") as server:
        yield root, server


@pytest.fixture
def app(dev_app: tuple[Path, Server], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("EVE_AUTH_TOKEN", raising=False)
    monkeypatch.chdir(dev_app[0] / "agent")  # any folder inside the app
    return dev_app[0]


def eve(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args), env={"COLUMNS": "200"})


def session_of(result: Result) -> str:
    match = SESSION_LINE.search(result.stderr)
    assert match is not None, result.output
    return match.group(1)


def test_send_prints_the_reply(app: Path, runner: CliRunner) -> None:
    first = eve(runner, "send", "hello")
    assert first.exit_code == 0, first.output
    assert first.stdout == "echo: hello\n"
    session_id = session_of(first)

    again = eve(runner, "send", "--session", session_id, "and again")
    assert again.exit_code == 0, again.output
    assert again.stdout == "echo: and again\n"


def test_send_exits_3_while_a_turn_waits_for_an_answer(app: Path, runner: CliRunner) -> None:
    waiting = eve(runner, "send", ALERT)
    assert waiting.exit_code == 3, waiting.output
    session_id = session_of(waiting)
    request_id = re.search(r"(aitxt-\w+) tool-approval", waiting.stdout)
    assert request_id is not None, waiting.stdout
    assert "[approve | cancel]" in waiting.stdout
    assert f"eve send --session {session_id} approve" in waiting.stdout

    shown = eve(runner, "sessions", "show", session_id)
    assert shown.exit_code == 0, shown.output
    assert "Waiting for an answer" in shown.stdout and request_id.group(1) in shown.stdout
    assert "waiting-on-input" in shown.stdout and "(approval: pending)" in shown.stdout

    approved = eve(runner, "send", "--session", session_id, "approve")
    assert approved.exit_code == 0, approved.output
    assert approved.stdout == 'send_alert -> {"city":"Paris","message":"Storm tonight","sent":true}\n'


def test_send_exits_1_when_the_turn_fails(app: Path, runner: CliRunner) -> None:
    failed = eve(runner, "send", "/fail the provider is down")
    assert failed.exit_code == 1
    assert "MODEL_CALL_FAILED: the provider is down" in failed.stderr
    assert "Traceback" not in failed.output


def test_sessions_list_show_and_stream(app: Path, runner: CliRunner) -> None:
    sent = eve(runner, "send", '/say Looking.\n/call get_weather {"city": "Paris"}')
    assert sent.exit_code == 0, sent.output
    session_id = session_of(sent)

    listed = eve(runner, "sessions", "list")
    assert listed.exit_code == 0, listed.output
    assert session_id in listed.stdout and "weather-agent" in listed.stdout
    assert "idle" in listed.stdout and "“/say Looking. /call get_weather" in listed.stdout
    as_json = json.loads(eve(runner, "sessions", "list", "--json").stdout)
    assert as_json[0]["sessionId"] == session_id and as_json[0]["status"] == "active"

    shown = eve(runner, "sessions", "show", session_id)
    assert shown.exit_code == 0, shown.output
    for expected in ("you", "Looking.", "get_weather", '{"city":"Paris"}', "completed", "Usage:", "input tokens"):
        assert expected in shown.stdout, shown.stdout

    streamed = eve(runner, "sessions", "stream", session_id, "--no-follow")
    assert streamed.exit_code == 0, streamed.output
    events = [json.loads(line) for line in streamed.stdout.splitlines()]
    assert events[0]["type"] == "session.started" and events[-1]["type"] == "session.waiting"
    assert len({e["meta"]["id"] for e in events}) == len(events)
    tail = eve(runner, "sessions", "stream", session_id, "--no-follow", "--start-index", "-1")
    assert [json.loads(line)["type"] for line in tail.stdout.splitlines()] == ["session.waiting"]


def test_stream_follows_until_the_session_ends(app: Path, runner: CliRunner) -> None:
    session_id = session_of(eve(runner, "send", "hello"))
    from eve_runtime.client import EveClient
    from eve_runtime.serving.dev_server import read_record

    record = read_record(app)
    assert record is not None
    with EveClient(record.url) as client:
        client.reset(session_id)
    followed = eve(runner, "sessions", "stream", session_id)
    assert followed.exit_code == 0, followed.output
    assert [json.loads(line)["type"] for line in followed.stdout.splitlines()][-2:] == [
        "session.waiting",
        "session.completed",
    ]


def test_an_unknown_session_is_a_clear_error(app: Path, runner: CliRunner) -> None:
    unknown = "wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV"
    for args in (("sessions", "show", unknown), ("send", "--session", unknown, "hi")):
        result = eve(runner, *args)
        assert result.exit_code == 1
        assert "error:" in result.stderr and "eve sessions list" in result.stderr
        assert "Traceback" not in result.output


def test_without_a_running_server(tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    root = scaffold_app(tmp_path / "idle-app")
    monkeypatch.chdir(root)
    none = eve(runner, "send", "hello")
    assert none.exit_code == 1
    assert "No eve dev server is running" in none.stderr and "eve dev" in none.stderr

    write_record(root, "http://127.0.0.1:1")  # a server that died without removing its record
    stale = eve(runner, "sessions", "list")
    assert stale.exit_code == 1
    assert "does not answer" in stale.stderr and "eve dev" in stale.stderr

    not_a_url = eve(runner, "sessions", "list", "--url", "127.0.0.1:3000")
    assert not_a_url.exit_code == 1 and "http:// or https://" in not_a_url.stderr

    unreachable = eve(runner, "sessions", "list", "--url", "http://127.0.0.1:1")
    assert unreachable.exit_code == 1 and "Cannot reach an eve server at http://127.0.0.1:1" in unreachable.stderr

    monkeypatch.chdir(tmp_path)
    outside = eve(runner, "sessions", "list")
    assert outside.exit_code == 1 and "--url" in outside.stderr
    for result in (none, stale, unreachable, outside):
        assert "Traceback" not in result.output


def test_a_production_server_by_url_and_token(tmp_path: Path, runner: CliRunner) -> None:
    compiled = compile_app(scaffold_app(tmp_path / "prod"), write=False)
    assert compiled.root is not None
    with LiveServer(compiled.root, compiled.manifest, mode="production", auth=BearerTokenAuth("t0ken")) as server:
        sent = eve(runner, "send", "hello", "--url", server.url, "--token", "t0ken")
        assert sent.exit_code == 0 and sent.stdout == "echo: hello\n"
        refused = runner.invoke(cli, ["send", "hello", "--url", server.url], env={"EVE_AUTH_TOKEN": "wrong"})
        assert refused.exit_code == 1 and "EVE_AUTH_TOKEN" in refused.stderr
        by_env = runner.invoke(cli, ["sessions", "list", "--url", server.url], env={"EVE_AUTH_TOKEN": "t0ken"})
        assert by_env.exit_code == 1 and "only eve dev serves them" in by_env.stderr
    compiled.loader.release()


def test_exit_codes_of_the_real_process(dev_app: tuple[Path, Server]) -> None:
    root, _server = dev_app
    done = _eve(root, "send", "hello")
    assert (done.returncode, done.stdout) == (0, "echo: hello\n")
    waiting = _eve(root, "send", ALERT)
    assert waiting.returncode == 3 and "tool-approval" in waiting.stdout
    failed = _eve(root, "send", "/fail nope")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
