"""`eve info` and `eve build`: output, artifacts, .env loading and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eve_cli.main import app

BROKEN_TOOL = "def get_weather(city: str) -> str:\n    return city\n"  # no docstring: no description


@pytest.fixture
def scaffolded(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert runner.invoke(app, ["init", "app", "-n", "--model", "test"]).exit_code == 0
    root = tmp_path / "app"
    monkeypatch.chdir(root)
    return root


def test_info_json_is_agent_info_v6_with_the_local_build(runner: CliRunner, scaffolded: Path) -> None:
    result = runner.invoke(app, ["info", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert (info["kind"], info["version"], info["mode"]) == ("eve-agent-info", 6, "development")
    assert info["status"] == "ready"
    assert info["agent"]["name"] == "app"
    assert info["agent"]["model"]["id"] == "test"
    assert [t["name"] for t in info["tools"]["static"]] == ["get_weather", "send_alert"]
    assert [s["name"] for s in info["subagents"]["local"]] == ["forecaster"]
    assert [s["name"] for s in info["skills"]["static"]] == ["plan_a_day"]
    assert {f["name"]: f["status"] for f in info["tools"]["framework"]}["load_skill"] == "active"
    assert info["instructions"]["static"][0]["role"] == "system"
    assert info["diagnostics"]["discoveryErrors"] == 0
    assert info["messaging"]["create"] == "POST /eve/v1/session"
    (schedule,) = info["schedules"]
    assert (schedule["name"], schedule["cron"], schedule["missed"]) == ("weekly-outlook", "0 8 * * 1", "latest")
    assert len(schedule["nextFireTimes"]) == 3 and all(t.endswith("T08:00:00Z") for t in schedule["nextFireTimes"])
    for artifact in info["artifacts"].values():
        assert Path(artifact).is_file()


def test_info_works_from_a_subfolder(runner: CliRunner, scaffolded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(scaffolded / "agent" / "tools")
    result = runner.invoke(app, ["info", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["agent"]["appRoot"] == str(scaffolded)


def test_info_human_view(runner: CliRunner, scaffolded: Path) -> None:
    result = runner.invoke(app, ["info"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    for expected in ("App Root", "Model", "test", "get_weather", "instructions.md (system)", "0 errors, 0 warnings"):
        assert expected in result.output
    assert "webhook (POST /webhook/messages" in result.output  # the template's channel and its routes
    assert "plan_a_day" in result.output  # and its skill
    assert "Schedules (UTC)" in result.output and "weekly-outlook" in result.output
    assert "0 8 * * 1" in result.output and " 08:00" in result.output  # its next fire times


def test_info_exits_1_and_shows_diagnostics_when_the_app_has_errors(runner: CliRunner, scaffolded: Path) -> None:
    (scaffolded / "agent/instructions.md").unlink()
    result = runner.invoke(app, ["info"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "discover/required-instructions-missing" in result.output
    json_result = runner.invoke(app, ["info", "--json"])
    assert json_result.exit_code == 1
    info = json.loads(json_result.stdout)
    assert info["status"] == "failed"
    assert info["diagnostics"]["entries"][0]["code"] == "discover/required-instructions-missing"


def test_info_outside_an_app_is_a_user_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["info"])
    assert result.exit_code == 1
    assert "No eve app found" in result.output and "eve init" in result.output


def test_commands_load_env_then_env_local(runner: CliRunner, scaffolded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVE_TEST_MODEL", raising=False)
    (scaffolded / "agent/agent.py").write_text(
        "import os\nfrom eve_runtime import define_agent\n\nagent = define_agent(model=os.environ['EVE_TEST_MODEL'])\n"
    )
    (scaffolded / ".env").write_text("EVE_TEST_MODEL=test/from-env\n")
    (scaffolded / ".env.local").write_text("EVE_TEST_MODEL=test/from-env-local\n")
    result = runner.invoke(app, ["info", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["agent"]["model"]["id"] == "test/from-env-local"


def test_build_writes_the_artifacts(runner: CliRunner, scaffolded: Path) -> None:
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    assert "Built app" in result.output
    manifest = json.loads((scaffolded / ".eve/compile/manifest.json").read_text())
    assert manifest["status"] == "ready" and manifest["content_hash"].startswith("sha256:")
    diagnostics = json.loads((scaffolded / ".eve/discovery/diagnostics.json").read_text())
    assert diagnostics == {"errors": 0, "warnings": 0, "diagnostics": []}
    assert (scaffolded / ".eve/discovery/agent-discovery-manifest.json").is_file()
    assert (scaffolded / ".eve/compile/compile-metadata.json").is_file()


def test_failed_build_exits_1_and_still_writes_diagnostics(runner: CliRunner, scaffolded: Path) -> None:
    (scaffolded / "agent/tools/get_weather.py").write_text(BROKEN_TOOL)
    result = runner.invoke(app, ["build"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "compile/tool-description-missing" in result.output
    assert "tools/get_weather.py" in result.output
    assert ".eve/discovery/diagnostics.json" in result.output
    diagnostics = json.loads((scaffolded / ".eve/discovery/diagnostics.json").read_text())
    assert diagnostics["errors"] == 1
    assert diagnostics["diagnostics"][0]["sourcePath"].endswith("tools/get_weather.py")
    manifest = json.loads((scaffolded / ".eve/compile/manifest.json").read_text())
    assert manifest["status"] == "failed"


def test_build_outside_an_app_is_a_user_error(runner: CliRunner) -> None:
    assert runner.invoke(app, ["build"]).exit_code == 1


def test_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    assert runner.invoke(app, ["frobnicate"]).exit_code == 2
    assert runner.invoke(app, ["info", "--bogus"]).exit_code == 2


def test_info_warns_when_the_models_key_is_not_set(runner: CliRunner, scaffolded: Path) -> None:
    (scaffolded / "agent/agent.py").write_text(
        'from eve_runtime import define_agent\n\nagent = define_agent(model="openai/gpt-4o-mini")\n'
    )
    result = runner.invoke(app, ["info"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())  # the table wraps at the console's width
    assert "ready, but OPENAI_API_KEY is not set" in shown  # never a plain "ready"
    assert "openai/gpt-4o-mini (OPENAI_API_KEY is not set: its turns fail until it is)" in shown
    assert "warning: the model openai/gpt-4o-mini needs an API key in OPENAI_API_KEY, which is not set" in shown
    (scaffolded / ".env").write_text("OPENAI_API_KEY=sk-from-the-dot-env-file\n")
    result = runner.invoke(app, ["info"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "not set" not in result.output and "ready in" in result.output
