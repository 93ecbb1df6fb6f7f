"""What `eve --help` and `eve info` import on the template app: the modules their time budget leaves out.

A small runner runs `eve` in a fresh interpreter and writes `sys.modules` at exit, so each
assertion names a module a change brought back (the time itself is `bench/cli_startup.py`'s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = """
import atexit, json, sys
record = sys.argv[1]

def written():
    loader = sys.modules.get("pydantic.plugin._loader")  # its cache of plugins: set once it looked for them
    scanned = ["(pydantic plugins scanned)"] if getattr(loader, "_plugins", None) is not None else []
    open(record, "w").write(json.dumps(sorted(sys.modules) + scanned))

atexit.register(written)
sys.argv = ["eve", *sys.argv[2:]]
from eve_cli.main import main
main()
"""


def _imported(args: list[str], cwd: Path, record: Path, columns: int = 100) -> set[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    command = [sys.executable, "-c", RUNNER, str(record), *args]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    modules: list[str] = json.loads(record.read_text())
    return set(modules)


def _package(modules: set[str], name: str) -> list[str]:
    return [m for m in modules if m == name or m.startswith(name + ".")]


def test_help_imports_neither_typer_nor_the_runtime(tmp_path: Path) -> None:
    modules = _imported(["--help"], tmp_path, tmp_path / "modules.json")
    assert "eve_cli._root_help" in modules  # the stored text (tests/cli/test_root_help.py holds it to typer's)
    for package in ("typer", "litellm", "pydantic", "rich", "asyncio", "eve_runtime", "eve_cli.commands", "shutil"):
        assert not _package(modules, package), package


def test_help_on_a_narrow_terminal_is_typers(tmp_path: Path) -> None:
    modules = _imported(["--help"], tmp_path, tmp_path / "modules.json", columns=60)
    assert "typer" in modules
    for package in ("litellm", "pydantic", "rich", "asyncio", "eve_runtime.project", "eve_runtime.authoring"):
        assert not _package(modules, package), package


def test_info_imports_what_compiling_needs_and_no_more(template_app: Path, tmp_path: Path) -> None:
    modules = _imported(["info"], template_app, tmp_path / "modules.json")
    assert "eve_runtime.project.compiler" in modules  # it did compile the app
    assert not _package(modules, "litellm")
    assert not _package(modules, "typer") and not _package(modules, "eve_cli.commands.info")  # eve_cli.main runs it
    # the authoring API the template's files do not use (it has no connection), the runtime and the stores
    for package in (
        "eve_runtime.authoring.evals",
        "eve_runtime.authoring.connections",
        "eve_runtime.authoring.connection_access",
        "eve_runtime.sessions",
        "eve_runtime.store",
        "eve_runtime.engine",
    ):
        assert not _package(modules, package), package
    # the model layer: compiling asks only whether an id is the test model and which key a provider needs
    assert not {"eve_runtime.models.base", "eve_runtime.models.litellm_model", "eve_runtime.messages"} & modules
    assert "yaml" not in modules  # the template's frontmatter is simple `key: text` lines
    assert "dotenv" not in modules  # it has no .env file to read
    assert not {"asyncio", "eve_runtime.sandbox.handle"} & modules  # the tools are compiled, never run
    # nor are commands: the sandbox's backends and what they run commands with load on first use
    assert not {"subprocess", "signal", "eve_runtime.sandbox.process", "eve_runtime.sandbox.backends"} & modules
    assert not {"eve_runtime.sandbox.bwrap", "eve_runtime.sandbox.local"} & modules
    assert "(pydantic plugins scanned)" not in modules  # PYDANTIC_DISABLE_PLUGINS: no entry-point scan
    assert "importlib.metadata" not in modules  # nor the loader that would have scanned (eve_cli.main.plugins_off)
    assert "eve_runtime.events.catalog" not in modules  # the channel's hooks check event names (events.names) only
    assert not _package(modules, "rich")  # the page is drawn by eve_cli._plain


def test_info_keeps_a_pydantic_plugin_setting_of_its_own(
    template_app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "some-plugin")  # one plugin off: pydantic loads the others
    modules = _imported(["info"], template_app, tmp_path / "modules.json")
    assert "(pydantic plugins scanned)" in modules


def test_info_json_imports_what_compiling_needs_and_no_more(template_app: Path, tmp_path: Path) -> None:
    modules = _imported(["info", "--json"], template_app, tmp_path / "modules.json")
    assert "eve_runtime.project.compiler" in modules
    for package in ("litellm", "eve_runtime.sessions", "rich", "yaml", "asyncio", "typer"):
        assert not _package(modules, package), package  # rich draws only the human view
