"""`eve schedules run NAME`: through a real `eve dev --no-ui` process, through `--url`, or in process."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from eve_cli.main import app as cli
from eve_runtime.client import EveClient
from eve_runtime.project.compiler import compile_app
from eve_runtime.server.auth import BearerTokenAuth
from tests.cli.test_serve import Server, serving
from tests.server.support import LiveServer, scaffold_app

pytestmark = pytest.mark.scenario

SESSION_ID = re.compile(r"^wrun_\w+$")


def eve(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args), env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def dev_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Server]]:
    root = scaffold_app(tmp_path_factory.mktemp("schedules") / "weather-agent")
    with serving(root, "dev", "--no-ui") as server:
        yield root, server


def test_fires_through_the_running_eve_dev(
    dev_app: tuple[Path, Server], runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, server = dev_app
    monkeypatch.chdir(root / "agent")
    fired = eve(runner, "schedules", "run", "weekly-outlook")
    assert fired.exit_code == 0, fired.output
    (session_id,) = fired.stdout.split()
    assert SESSION_ID.match(session_id)
    assert f"through {server.url}" in fired.stderr and f"eve sessions show {session_id}" in fired.stderr
    with EveClient(server.url) as client:
        result = client.result(session_id)
    assert result.reply is not None and result.reply.startswith("echo: Look up the weather in Paris")


def test_an_unknown_schedule_names_the_ones_there_are(
    dev_app: tuple[Path, Server], runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(dev_app[0])
    unknown = eve(runner, "schedules", "run", "nightly")
    assert unknown.exit_code == 1
    assert "no schedule 'nightly'" in unknown.stderr and "weekly-outlook" in unknown.stderr
    assert "Traceback" not in unknown.output


def test_without_a_server_it_fires_here_and_prints_the_answer(
    tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = scaffold_app(tmp_path / "offline")
    monkeypatch.chdir(root)
    fired = eve(runner, "schedules", "run", "weekly-outlook")
    assert fired.exit_code == 0, fired.output
    (session_id,) = fired.stdout.split()
    assert SESSION_ID.match(session_id)
    assert "firing weekly-outlook here" in fired.stderr
    assert f"{session_id}: echo: Look up the weather in Paris" in fired.stderr
    again = eve(runner, "schedules", "run", "weekly-outlook")  # the store was closed again
    assert again.exit_code == 0 and again.stdout.split() != [session_id]
    unknown = eve(runner, "schedules", "run", "nightly")
    assert unknown.exit_code == 1 and "no schedule 'nightly'" in unknown.stderr
    assert "Traceback" not in unknown.output


def test_a_production_server_does_not_fire_by_hand(tmp_path: Path, runner: CliRunner) -> None:
    compiled = compile_app(scaffold_app(tmp_path / "prod"), write=False)
    assert compiled.root is not None
    with LiveServer(compiled.root, compiled.manifest, mode="production", auth=BearerTokenAuth("t0ken")) as server:
        refused = eve(runner, "schedules", "run", "weekly-outlook", "--url", server.url, "--token", "t0ken")
    compiled.loader.release()
    assert refused.exit_code == 1
    assert "only eve dev serves POST /eve/v1/dev/schedules/NAME" in refused.stderr
    assert "Traceback" not in refused.output


def test_outside_an_app_it_says_so(tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = eve(runner, "schedules", "run", "weekly-outlook")
    assert result.exit_code == 1 and "agent/" in result.stderr
    assert "Traceback" not in result.output
