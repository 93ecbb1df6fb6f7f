"""`eve eval`: the template's evals pass, a failing eval exits 1 with JUnit, ids and prefixes, config errors, --url."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eve_cli.main import app as cli
from tests.cli.test_serve import TOKEN, serving
from tests.server.support import scaffold_app

FAILING = """
from eve_runtime import define_eval


async def test(t):
    await t.send("/reply It rains in Paris.")
    t.completed()
    t.message_includes("sunny")


eval = define_eval(test)
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`eve init --model test`'s app, as it comes."""
    return scaffold_app(tmp_path_factory.mktemp("eval") / "weather-agent")


def _runs(app: Path) -> list[Path]:
    return sorted((app / ".eve" / "evals").iterdir()) if (app / ".eve" / "evals").is_dir() else []


def _ids(run: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run / "results.jsonl").read_text().splitlines()]


def test_the_templates_evals_pass(template: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(template)
    result = runner.invoke(cli, ["eval", "--junit", "junit.xml"])
    assert result.exit_code == 0, result.output
    assert "weather/paris" in result.output and "passed" in result.output
    run = _runs(template)[-1]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["ok"] is True and summary["counts"]["passed"] == 2
    assert _ids(run) == ["alerts", "weather/paris"]
    suite = ET.parse(template / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"


def test_picking_by_id_and_prefix(template: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(template)
    picked = runner.invoke(cli, ["eval", "weather", "--json"])
    assert picked.exit_code == 0
    assert [item["id"] for item in json.loads(picked.stdout)["evals"]] == ["weather/paris"]
    assert _ids(_runs(template)[-1]) == ["weather/paris"]
    assert runner.invoke(cli, ["eval", "alerts", "weather/paris"]).exit_code == 0
    assert _ids(_runs(template)[-1]) == ["alerts", "weather/paris"]
    listed = runner.invoke(cli, ["eval", "--list", "--tag", "smoke"])
    assert (listed.exit_code, listed.output.split()) == (0, ["weather/paris", "smoke"])
    unknown = runner.invoke(cli, ["eval", "weath"])  # a prefix is a whole path segment
    assert unknown.exit_code == 2
    assert "No eval has the id or prefix 'weath'. The evals are: alerts, weather/paris." in unknown.output


def test_a_failing_eval_exits_1_with_its_failure_in_junit(
    template: Path, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "app"
    shutil.copytree(template, app, ignore=shutil.ignore_patterns(".eve"))
    (app / "evals" / "weather" / "rain.eval.py").write_text(FAILING)
    monkeypatch.chdir(app)
    result = runner.invoke(cli, ["eval", "weather", "--junit", "reports/junit.xml"])
    assert result.exit_code == 1, result.output
    assert "failed" in result.output
    cases = {case.get("name"): case for case in ET.parse(app / "reports" / "junit.xml").iter("testcase")}
    assert set(cases) == {"paris", "rain"}
    assert cases["paris"].find("failure") is None
    failure = cases["rain"].find("failure")
    assert failure is not None and "message_includes" in (failure.get("message") or "")
    assert "'sunny'" in (failure.text or "")


def test_configuration_errors_exit_2(
    template: Path, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "app"
    shutil.copytree(template, app, ignore=shutil.ignore_patterns(".eve"))
    monkeypatch.chdir(app)
    (app / "evals" / "broken.eval.py").write_text("x = 1 / 0\n")
    broken = runner.invoke(cli, ["eval"])
    assert broken.exit_code == 2
    assert "broken.eval.py:1: loading failed: ZeroDivisionError" in broken.output
    (app / "evals" / "broken.eval.py").unlink()
    (app / "evals" / "evals_config.py").unlink()
    missing = runner.invoke(cli, ["eval"])
    assert missing.exit_code == 2
    assert "has no evals_config.py" in missing.output and "define_eval_config()" in missing.output


@pytest.mark.scenario
def test_against_a_running_server_with_a_token(
    template: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(template)
    with serving(template, "start", env={"EVE_AUTH_TOKEN": TOKEN}) as server:
        refused = runner.invoke(
            cli, ["eval", "weather", "--url", server.url], env={"EVE_EVAL_AUTH_TOKEN": "wrong-token"}
        )
        assert refused.exit_code == 1 and "refused /eve/v1/info" in refused.output
        passed = runner.invoke(cli, ["eval", "weather", "--url", server.url], env={"EVE_EVAL_AUTH_TOKEN": TOKEN})
        assert passed.exit_code == 0, passed.output
        run = _runs(template)[-1]
        summary = json.loads((run / "summary.json").read_text())
        assert summary["target"] == server.url and summary["ok"] is True
        (session_id,) = summary["evals"][0]["sessionIds"]
        shown = runner.invoke(cli, ["sessions", "show", session_id, "--url", server.url, "--token", TOKEN])
        assert shown.exit_code == 0 and "It is sunny in Paris." in shown.output, shown.output
        # tool stubs need the server's grant: eve start without EVE_ALLOW_TOOL_STUBS=1 refuses them
        stubbed = runner.invoke(cli, ["eval", "alerts", "--url", server.url], env={"EVE_EVAL_AUTH_TOKEN": TOKEN})
        assert stubbed.exit_code == 1
        (line,) = (_runs(template)[-1] / "results.jsonl").read_text().splitlines()
        assert "does not allow tool stubs" in json.loads(line)["error"]
