"""`eve --help` prints a stored text (`eve_cli._root_help`) instead of building the typer app: it must be typer's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eve_cli._root_help import ROOT_HELP
from eve_cli.app import render_root_help

FAST = "import sys; sys.argv = ['eve', *sys.argv[1:]]; from eve_cli.main import main; main()"
TYPER = "from eve_cli.app import app; app(prog_name='eve')"


def _run(code: str, args: list[str], tmp_path: Path, columns: int | None) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=env, capture_output=True, text=True)


def test_the_stored_help_is_what_the_app_renders() -> None:
    assert render_root_help() == ROOT_HELP, "run .venv/bin/python scripts/root_help.py"


@pytest.mark.parametrize("columns", [80, 200, None])  # None: not a terminal, typer's 80-column fallback
@pytest.mark.parametrize("option", ["--help", "-h"])
def test_eve_help_prints_what_typer_prints(option: str, columns: int | None, tmp_path: Path) -> None:
    fast = _run(FAST, [option], tmp_path, columns)
    typer = _run(TYPER, [option], tmp_path, columns)
    assert fast.returncode == typer.returncode == 0, fast.stderr + typer.stderr
    assert fast.stdout == typer.stdout == ROOT_HELP
    assert fast.stderr == ""


def test_a_narrow_terminal_gets_typers_wrapping(tmp_path: Path) -> None:
    fast = _run(FAST, ["--help"], tmp_path, 60)
    assert fast.returncode == 0, fast.stderr
    assert fast.stdout == _run(TYPER, ["--help"], tmp_path, 60).stdout
    assert fast.stdout != ROOT_HELP  # wrapped at 58 columns, not the stored 78


def test_other_arguments_run_the_app(tmp_path: Path) -> None:
    version = _run(FAST, ["--version"], tmp_path, 100)
    assert version.returncode == 0 and version.stdout.startswith("eve ")
    both = _run(FAST, ["--help", "--version"], tmp_path, 100)  # typer's eager --help, not the stored path
    assert both.returncode == 0 and both.stdout == ROOT_HELP
    info_help = _run(FAST, ["info", "--help"], tmp_path, 100)
    assert info_help.returncode == 0 and "--json" in info_help.stdout


def test_python_m_eve_cli_names_itself(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "eve_cli", "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: python -m eve_cli [OPTIONS]")


def test_a_reader_that_goes_away_ends_it_quietly(tmp_path: Path) -> None:
    def closed_early(code: str) -> tuple[int, bytes]:
        env = {**os.environ, "COLUMNS": "100"}
        command = [sys.executable, "-c", code, "--help"]
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        with process.stderr:
            stderr = process.stderr.read()
        return process.wait(), stderr

    assert closed_early(FAST) == closed_early(TYPER) == (1, b"")
