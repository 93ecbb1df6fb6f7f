"""What `eve connections test NAME` runs: connect to one connection of a compiled app and list its tools.

It connects as a session would (the same headers, the same token lookup), outside any session:
`get_token` sees the session id `eve-connections-test` and no principal. A failure comes back
as a message that says what went wrong and what to change; nothing is written anywhere. An
OAuth connection (`connection_auth(oauth=...)`) cannot sign in from here (its tokens live in a
running server's memory): the check asks the server whether it wants a sign-in, and says how.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import httpx

from eve_runtime.authoring.connection_access import ConnectionCallError, ConnectionToolInfo
from eve_runtime.authoring.connections import AuthContext, ConnectionDefinition, McpClientConnection
from eve_runtime.connections import ConnectionManager
from eve_runtime.project.runtime_agent import RuntimeAgent

__all__ = ["ConnectionReport", "check_connection", "find_connection"]

CHECK_SESSION = "eve-connections-test"


@dataclass
class ConnectionReport:
    """The outcome: the tools (after the connection's filter), or why there are none."""

    name: str
    protocol: str
    where: str
    tools: list[ConnectionToolInfo] = field(default_factory=list)
    problem: str | None = None
    fix: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def find_connection(root: RuntimeAgent, name: str) -> tuple[ConnectionDefinition, str] | None:
    """The connection named `name` of the root agent or of a subagent, with the agent's name."""
    for agent in root.walk():
        if name in agent.connections:
            return agent.connections[name], agent.name
    return None


def _fix(code: str, definition: ConnectionDefinition, name: str) -> str:
    if code == "AUTHORIZATION_REQUIRED":
        auth = definition.auth
        variable = f"set {auth.token_env} (in .env or the environment)" if auth and auth.token_env else ""
        return (variable + " or " if variable else "") + f"POST a token to /eve/v1/connections/{name}/token"
    if isinstance(definition, McpClientConnection):
        if definition.url is not None:
            return f"start the MCP server, or fix url= in connections/{name}.py (and its headers/auth)"
        return f"check command= in connections/{name}.py: run it by hand, it must speak MCP on stdin/stdout"
    return f"check spec= and base_url= in connections/{name}.py"


def _sign_in_fix(name: str) -> str:
    return (
        f"run `eve dev`, ask the agent to use {name}, and open the URL of its authorization.required event "
        f"in a browser (the sign-in comes back to /eve/v1/connections/{name}/callback; set EVE_PUBLIC_URL "
        "when browsers reach the server at another address)"
    )


async def _check_oauth(report: ConnectionReport, name: str, definition: McpClientConnection) -> None:
    """Whether the server is there and asks for a sign-in (an unauthenticated `initialize`)."""
    from eve_runtime.connections.oauth import initialize

    assert definition.url is not None
    try:
        async with httpx.AsyncClient(headers=definition.resolved_headers(), timeout=15.0) as client:
            response = await initialize(client, definition.url)
    except httpx.HTTPError:
        report.problem = "cannot connect to the MCP server: is the MCP server running?"
        report.fix = _fix("CONNECTION_UNAVAILABLE", definition, name)
        return
    if response.status_code == 401:
        report.problem = (
            "it signs in with OAuth, and the server asks for a sign-in (HTTP 401"
            + (
                ", naming its authorization server)"
                if "resource_metadata" in response.headers.get("www-authenticate", "")
                else ")"
            )
            + "; tokens live in the running server's memory, so this command cannot list the tools"
        )
    else:
        report.problem = (
            f"it signs in with OAuth, but the server answered HTTP {response.status_code} to a request without a "
            "sign-in; this command cannot sign in (tokens live in the running server's memory)"
        )
    report.fix = _sign_in_fix(name)


async def check_connection(name: str, definition: ConnectionDefinition, app_root: Path) -> ConnectionReport:
    """List the connection's tools, the way a session's first need would."""
    report = ConnectionReport(name=name, protocol=definition.protocol, where=definition.shown_url())
    if isinstance(definition, McpClientConnection) and definition.auth is not None and definition.auth.oauth:
        await _check_oauth(report, name, definition)
        return report
    manager = ConnectionManager(cwd=app_root)
    caller = AuthContext(connection=name, session_id=CHECK_SESSION, principal_id=None)
    try:
        report.tools = await manager.list_tools(name, definition, caller)
    except ConnectionCallError as exc:
        report.problem = exc.message
        report.fix = _fix(exc.code, definition, name)
    except Exception as exc:  # a broken get_token, or anything the SDK raises
        report.problem = f"{type(exc).__name__}: {exc}"
        report.fix = f"check connections/{name}.py"
    finally:
        await manager.close()
    return report
