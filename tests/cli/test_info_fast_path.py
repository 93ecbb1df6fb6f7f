"""`eve info [--json]` runs without the typer app (`eve_cli.main.run_info`): it must answer as the app's `info` does."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import copy_template

FAST = "import sys; sys.argv = ['eve', *sys.argv[1:]]; from eve_cli.main import main; main()"
TYPER = "from eve_cli.app import app; app(prog_name='eve')"
ELAPSED = re.compile(r"(ready|failed) in \d+ ms")


def _run(code: str, args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, "COLUMNS": "120"}
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True)
    stdout = "\n".join(line.rstrip() for line in ELAPSED.sub(r"\1 in N ms", result.stdout).split("\n"))
    return result.returncode, stdout, result.stderr  # the compile's time, and so its line's padding, varies


@pytest.mark.parametrize("args", [["info"], ["info", "--json"]])
def test_the_template_app(args: list[str], template_app: Path) -> None:
    fast = _run(FAST, args, template_app)
    assert fast[0] == 0, fast[2]
    assert fast == _run(TYPER, args, template_app)
    assert "get_weather" in fast[1]


@pytest.mark.parametrize("args", [["info"], ["info", "--json"]])
def test_an_app_with_errors_exits_1(args: list[str], template_app: Path) -> None:
    (template_app / "agent" / "instructions.md").unlink()
    fast = _run(FAST, args, template_app)
    assert fast[0] == 1
    assert "discover/required-instructions-missing" in fast[1]
    assert fast == _run(TYPER, args, template_app)


def test_outside_an_app_is_the_same_user_error(tmp_path: Path) -> None:
    fast = _run(FAST, ["info"], tmp_path)
    assert fast[0] == 1 and "No eve app found" in fast[2] and fast[1] == ""
    assert fast == _run(TYPER, ["info"], tmp_path)


def test_other_arguments_go_through_the_app(template_app: Path) -> None:
    code, stdout, stderr = _run(FAST, ["info", "--jsn"], template_app)
    assert code == 2 and "No such option" in stderr and stdout == ""
    code, stdout, _ = _run(FAST, ["info", "--help"], template_app)
    assert code == 0 and "--json" in stdout


def test_a_colon_name_in_a_path_is_printed_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "x:thumbs_up:y"
    root.mkdir()
    code, stdout, stderr = _run(FAST, ["info"], copy_template(root))
    assert code == 0, stderr
    assert f"App Root            {root / 'app'}\n" in stdout  # rich's emoji codes are off: no 👍


@pytest.mark.parametrize("args", [["info"], ["info", "--json"]])
def test_a_reader_that_goes_away_ends_it_quietly(args: list[str], template_app: Path) -> None:
    def closed_early(code: str) -> tuple[int, bytes]:
        command = [sys.executable, "-c", code, *args]
        process = subprocess.Popen(command, cwd=template_app, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # before it writes a byte
        with process.stderr:
            stderr = process.stderr.read()
        return process.wait(), stderr

    assert closed_early(FAST) == closed_early(TYPER) == (1, b"")  # click's way: exit 1, no traceback


def test_ctrl_c_aborts_as_click_does(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import eve_cli.commands._info
    from eve_cli.main import run_info

    def interrupted(as_json: bool) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(eve_cli.commands._info, "show_info", interrupted)
    monkeypatch.setattr(gc, "disable", lambda: None)  # run_info's, for its own process only
    assert run_info(False) == 1
    assert capsys.readouterr().err == "\nAborted!\n"
