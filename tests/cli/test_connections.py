"""`eve connections test NAME`: the tools of a real MCP server, or what failed and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from eve_cli.main import app
from tests.connections.servers import OAUTH_FIXTURE, STDIO_COMMAND, McpHttpServer

CONNECTIONS = {
    "srv": f"srv = define_mcp_client_connection(command={STDIO_COMMAND!r}, description='Test server.')\n",
    "gone": "gone = define_mcp_client_connection(url='http://127.0.0.1:9/mcp', description='Down.')\n",
    "locked": (
        f"locked = define_mcp_client_connection(command={STDIO_COMMAND!r}, description='Locked.',\n"
        "    auth=connection_auth(token_env='LOCKED_TOKEN'))\n"
    ),
}


@pytest.fixture
def project(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert runner.invoke(app, ["init", "app", "-n", "--model", "test"]).exit_code == 0
    root = tmp_path / "app"
    folder = root / "agent" / "connections"
    folder.mkdir(exist_ok=True)
    for name, body in CONNECTIONS.items():
        (folder / f"{name}.py").write_text(
            "from eve_runtime import connection_auth, define_mcp_client_connection\n\n" + body
        )
    monkeypatch.chdir(root)
    monkeypatch.delenv("LOCKED_TOKEN", raising=False)
    return root


def test_lists_the_tools_by_qualified_name(runner: CliRunner, project: Path) -> None:
    result = runner.invoke(app, ["connections", "test", "srv"])
    assert result.exit_code == 0, result.output
    assert "srv__echo" in result.stdout and "srv__add" in result.stdout and "(read-only)" in result.stdout


def test_an_unreachable_server_says_what_to_fix(runner: CliRunner, project: Path) -> None:
    result = runner.invoke(app, ["connections", "test", "gone"])
    assert result.exit_code == 1
    assert "is the MCP server running" in result.stderr and "Fix: start the MCP server" in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_token_and_an_unknown_name(runner: CliRunner, project: Path) -> None:
    locked = runner.invoke(app, ["connections", "test", "locked"])
    assert locked.exit_code == 1 and "LOCKED_TOKEN" in locked.stderr
    unknown = runner.invoke(app, ["connections", "test", "nope"])
    assert unknown.exit_code == 1 and "gone, locked, srv" in unknown.stderr


def test_an_oauth_connection_says_a_sign_in_is_needed_and_how(runner: CliRunner, project: Path, tmp_path: Path) -> None:
    server = McpHttpServer(tmp_path, fixture=OAUTH_FIXTURE).start()
    try:
        (project / "agent" / "connections" / "tracker.py").write_text(
            "from eve_runtime import connection_auth, define_mcp_client_connection, mcp_oauth\n\n"
            f"tracker = define_mcp_client_connection(url={server.url!r}, description='Issues.',\n"
            "    auth=connection_auth(oauth=mcp_oauth()))\n"
        )
        result = runner.invoke(app, ["connections", "test", "tracker"])
    finally:
        server.kill()
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "asks for a sign-in (HTTP 401, naming its authorization server)" in result.stderr
    assert "authorization.required" in result.stderr and "eve dev" in result.stderr
    down = runner.invoke(app, ["connections", "test", "tracker"])  # the server is gone now
    assert down.exit_code == 1 and "is the MCP server running" in down.stderr
