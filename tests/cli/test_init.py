"""`eve init`: scaffolding, refusals, model choice and exit codes."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eve_cli.main import app
from eve_runtime.project.compiler import compile_app

TEMPLATE_FILES = {
    "agent/agent.py",
    "agent/instructions.md",
    "agent/tools/get_weather.py",
    "agent/tools/send_alert.py",
    "agent/skills/plan_a_day.md",
    "agent/channels/webhook.py",
    "agent/subagents/forecaster/agent.py",
    "agent/subagents/forecaster/instructions.md",
    "agent/schedules/weekly-outlook.md",
    "agent/connections/README.md",
    "evals/evals_config.py",
    "evals/weather/paris.eval.py",
    "evals/alerts.eval.py",
    "pyproject.toml",
    ".gitignore",
    "README.md",
}


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def test_init_writes_every_template_file(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "my-agent", "--model", "test", "-n"])
    assert result.exit_code == 0, result.output
    root = tmp_path / "my-agent"
    assert files_under(root) == TEMPLATE_FILES
    assert 'define_agent(model="test")' in (root / "agent/agent.py").read_text()
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "my-agent"
    assert project["dependencies"][0].startswith("eve-framework>=")
    assert ".eve/" in (root / ".gitignore").read_text().splitlines()
    assert "get_weather" in (root / "agent/tools/get_weather.py").read_text()
    readme = (root / "README.md").read_text()
    assert readme.startswith("# my-agent") and "{{" not in readme
    assert "Model: test (given with --model)" in result.output
    assert "cd my-agent" in result.output
    steps = result.output[result.output.index("Next steps:") :].splitlines()
    assert steps[1:3] == [
        "  cd my-agent",
        "  eve dev      chat with the agent in this terminal; it reloads on every save (/help inside)",
    ]
    assert "/call get_weather" in result.output  # the test model's directives, in one line
    assert readme.index("eve dev") < readme.index("eve info")  # the README leads with eve dev too
    assert "/call get_weather" in readme


def test_scaffolded_app_compiles_cleanly_and_its_tool_runs(runner: CliRunner, tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", "app", "--model", "test", "-n"]).exit_code == 0
    compiled = compile_app(tmp_path / "app")
    assert compiled.ok and compiled.diagnostics == []
    assert compiled.root is not None
    weather = compiled.root.tools["get_weather"]
    assert weather.manifest.input_schema["required"] == ["city"]
    assert weather.function is not None
    assert weather.function("Paris") == {"city": "Paris", "condition": "Sunny", "temperatureF": 72}
    plan = compiled.root.skills["plan_a_day"].manifest
    assert plan.description == "Plan a day or an outing around the weather, hour by hour."
    assert "`plan_a_day` skill" in (tmp_path / "app/agent/instructions.md").read_text()
    compiled.loader.release()


def test_init_in_the_current_empty_folder(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", ".", "-n", "--model", "test"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "agent/instructions.md").is_file()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_new_folder_gets_a_git_repository(runner: CliRunner, tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", "repo", "-n", "--model", "test"]).exit_code == 0
    assert (tmp_path / "repo/.git").is_dir()


def test_refuses_a_non_empty_folder_that_is_not_a_project(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "stuff"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["init", "stuff", "-n", "--model", "test"])
    assert result.exit_code == 1
    assert "is not empty" in result.output and "eve init my-agent" in result.output
    assert files_under(target) == {"notes.txt"}


def test_refuses_a_folder_that_already_has_an_agent(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "app/agent").mkdir(parents=True)
    result = runner.invoke(app, ["init", "app", "-n", "--model", "test"])
    assert result.exit_code == 1
    assert "already has an agent/ folder" in result.output


def test_refuses_a_file_as_target(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = runner.invoke(app, ["init", "file", "-n", "--model", "test"])
    assert result.exit_code == 1
    assert "is a file" in result.output


def test_existing_python_project_gets_only_the_agent_folder(runner: CliRunner, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    pyproject = '[project]\nname = "proj"\nversion = "1.0"\n'
    (project / "pyproject.toml").write_text(pyproject)
    (project / "README.md").write_text("my readme")
    result = runner.invoke(app, ["init", "proj", "-n", "--model", "test"])
    assert result.exit_code == 0, result.output
    assert files_under(project) == {
        "pyproject.toml",
        "README.md",
        "agent/agent.py",
        "agent/instructions.md",
        "agent/tools/get_weather.py",
        "agent/tools/send_alert.py",
        "agent/skills/plan_a_day.md",
        "agent/channels/webhook.py",
        "agent/subagents/forecaster/agent.py",
        "agent/subagents/forecaster/instructions.md",
        "agent/schedules/weekly-outlook.md",
        "agent/connections/README.md",
    }
    assert (project / "pyproject.toml").read_text() == pyproject
    assert (project / "README.md").read_text() == "my readme"
    assert "Add 'eve-framework'" in result.output


def test_unknown_template_is_a_user_error_and_writes_nothing(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "app", "--template", "nope", "-n", "--model", "test"])
    assert result.exit_code == 1
    assert "There is no template 'nope'" in result.output and "default" in result.output
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize("model", ["", "a b", 'x"y', "-x"])
def test_invalid_model_ids_are_refused(runner: CliRunner, tmp_path: Path, model: str) -> None:
    result = runner.invoke(app, ["init", "app", "-n", f"--model={model}"])
    assert result.exit_code == 1
    assert "is not a model id" in result.output
    assert not (tmp_path / "app").exists()


def test_an_unknown_provider_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "app", "-n", "--model", "opanai/gpt-4o-mini"])
    assert result.exit_code == 1
    assert "names the provider 'opanai', which litellm does not know: did you mean 'openai'?" in result.output
    assert not (tmp_path / "app").exists()


def test_without_a_provider_key_the_test_model_is_chosen_and_explained(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "app", "-n"])
    assert result.exit_code == 0, result.output
    assert 'define_agent(model="test")' in (tmp_path / "app/agent/agent.py").read_text()
    assert "Model: test" in result.output and "offline test model" in result.output


def test_a_provider_key_in_the_environment_picks_that_provider(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    result = runner.invoke(app, ["init", "app", "-n"])
    assert result.exit_code == 0, result.output
    agent_py = (tmp_path / "app/agent/agent.py").read_text()
    assert 'model="anthropic/' in agent_py
    assert "ANTHROPIC_API_KEY" in result.output
    assert "sk-test" not in result.output


def test_unknown_option_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["init", "--no-such-flag"])
    assert result.exit_code == 2


def test_bare_eve_outside_an_app_scaffolds_here(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, [])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "agent/agent.py").is_file()


def test_bare_eve_inside_an_app_shows_help(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(app, ["init", "app", "-n", "--model", "test"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "app" / "agent" / "tools")
    result = runner.invoke(app, [])
    assert result.exit_code == 0
    assert "Usage" in result.output and "init" in result.output and "info" in result.output
    assert files_under(tmp_path / "app") == TEMPLATE_FILES


def test_version_flag(runner: CliRunner) -> None:
    from eve_runtime import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"eve {__version__}"
