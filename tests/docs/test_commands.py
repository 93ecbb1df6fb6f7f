"""Every shell command README.md and docs/*.md show either runs, offline, or matches the code.

- `eve init`, `eve info`, `eve build`, `eve --help` and `eve --version` run for real, in the
  order a file shows them, in a temporary folder (`cd` too), on the offline `test` model.
- Every other `eve` command's subcommands and flags must exist and show in its `--help`.
- `make` targets must exist in the Makefile.
- `curl` commands must name a route the server serves for their method, and their `-d` bodies
  must be JSON; a new session's body (nothing to fill in) is sent to a real server: 202.
- `.venv/bin/python` must run a script this repository has.
- Any other program must be one this test knows (add it to `PLAIN` if there is nothing to check).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from tests.docs.checks import ROOT, check_eve, check_make, curl_request, described, route_matches
from tests.docs.shell import CodeBlock, Command, code_blocks, commands_of
from tests.server.support import LiveServer, scaffold_app

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EVE = str(Path(sys.executable).with_name("eve"))
RUNNABLE = frozenset({"init", "info", "build", "eval", "--help", "--version"})
"""`eve` commands that run offline and end by themselves (the others serve or need a server)."""
PLAIN = frozenset({".", "source", "pip", "openssl", "grep", "export", "echo"})
"""Programs shown for context, with nothing of this project's to check."""
ALL = [command for path in DOCS for command in commands_of(path)]


def _ids(command: Command) -> str:
    return f"{command.where} {command}"[:90]


def test_the_docs_show_commands() -> None:
    assert {path.name for path in DOCS} >= {"README.md", "http.md", "cli.md"}
    assert len(ALL) > 20, "the extractor lost the documented commands"


@pytest.mark.parametrize("command", ALL, ids=_ids)
def test_each_command_matches_the_code(command: Command) -> None:
    if command.program == "eve" or command.program.endswith(".venv/bin/eve"):  # a clone's own eve too
        check_eve(command)
    elif command.program == "make":
        check_make(command)
    elif command.program == "curl":
        curl_request(command)  # the body is JSON; the route is checked against a real server below
    elif command.program == "cd":
        assert len(command.words) == 2, f"{command.where}: `{command}`"
    elif command.program == ".venv/bin/python":  # a script of this repository, run from a clone
        assert len(command.words) >= 2 and (ROOT / command.words[1]).is_file(), f"{command.where}: `{command}`"
    else:
        assert command.program in PLAIN, (
            f"{command.where}: `{command}` runs {command.program!r}, which tests/docs does not know how to check"
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The template app on a real server in development mode (every route `eve dev` serves)."""
    root = scaffold_app(tmp_path_factory.mktemp("docs") / "weather-agent")
    compiled: CompiledApp = compile_app(root, write=False)
    assert compiled.ok and compiled.root is not None, compiled.diagnostics
    try:
        with LiveServer(compiled.root, compiled.manifest) as live:
            yield live
    finally:
        compiled.loader.release()


def test_every_curl_names_a_served_route(served: LiveServer) -> None:
    assert served.app is not None
    routes = served.app.routes
    curls = [command for command in ALL if command.program == "curl"]
    assert curls
    for command in curls:
        request = curl_request(command)
        assert route_matches(routes, request.method, request.path), (
            f"{command.where}: `{command}`: no route serves {request.method} {request.path} "
            f"(the routes: {described(routes)})"
        )
        if request.path == "/eve/v1/session" and request.method == "POST":
            answer = httpx.post(served.url + request.path, json=request.body, timeout=30)
            assert answer.status_code == 202, f"{command.where}: `{command}` answered {answer.text}"


def _offline_env(home: Path) -> dict[str, str]:
    """A clean environment: no provider keys (so `eve init` picks `test`), no `EVE_*` settings."""
    path = os.pathsep.join([str(Path(EVE).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", "NO_COLOR": "1", "COLUMNS": "120"}


def _runnable(command: Command) -> bool:
    return command.program == "cd" or (
        command.program == "eve" and len(command.words) > 1 and command.words[1] in RUNNABLE
    )


RUNS = [path for path in DOCS if any(_runnable(command) and command.program == "eve" for command in commands_of(path))]


@pytest.mark.parametrize("path", RUNS, ids=lambda path: path.name)
def test_offline_commands_run(path: Path, tmp_path: Path) -> None:
    cwd, home = tmp_path / "work", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    for command in filter(_runnable, commands_of(path)):
        if command.program == "cd":
            target = cwd / command.words[1]
            if target.is_dir():  # a `cd` into a folder a command before it made; others are someone's own
                cwd = target
            continue
        run = subprocess.run(
            [EVE, *command.words[1:]],
            cwd=cwd,
            env=_offline_env(home) | dict(a.split("=", 1) for a in command.assignments),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, f"{command.where}: `{command}` exited {run.returncode}:\n{run.stdout}{run.stderr}"


CLIENT_EXAMPLES = [
    block
    for path in (ROOT / "README.md", ROOT / "docs" / "client.md")
    for block in code_blocks(path)
    if block.language == "python" and "EveClient(" in block.text
]


@pytest.mark.parametrize("block", CLIENT_EXAMPLES, ids=lambda block: f"{block.path.name}:{block.line}")
def test_the_client_examples_run(block: CodeBlock, served: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    """The Python client examples, as written, against a real server on the `test` model."""
    code = block.text.replace("http://127.0.0.1:2000", served.url)
    if "AsyncEveClient(" in code:  # top-level `async with` runs in a coroutine
        code = "import asyncio\n\nasync def main():\n" + textwrap.indent(code, "    ") + "\n\nasyncio.run(main())\n"
    exec(compile(code, f"{block.path.name}:{block.line}", "exec"), {"__name__": "example"})
    out = capsys.readouterr().out
    if block.path.name == "README.md":
        reply, summary = out.splitlines()
        assert reply == 'get_weather -> {"city":"Paris","condition":"Sunny","temperatureF":72}'
        status, tokens = summary.split()
        assert status == "completed" and int(tokens) > 0
    else:
        assert out.strip(), f"{block.path.name}:{block.line} printed nothing"
