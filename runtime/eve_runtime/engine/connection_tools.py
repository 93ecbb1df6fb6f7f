"""Connection tools in a session: `connection_search`, and the `<connection>__<tool>` tools it finds.

`connection_search` lists the agent's connections' tools (each listed at its first need through
the runtime's `ConnectionAccess` port, then cached there) and ranks them against the query; what
it finds is kept in the session's state (`connection_tools`), so those tools are offered to the
model from the next step on, across restarts. A call to `<connection>__<tool>` goes to the
connection whether or not a search found it first (the server checks the input). The model sees
names, descriptions and input schemas, never a URL, a header or a token.
"""

from __future__ import annotations

import re
from typing import Any

from eve_runtime.authoring.connection_access import SEPARATOR, ConnectionCallError, ConnectionToolInfo, content_text
from eve_runtime.authoring.connections import AuthContext, ConnectionDefinition
from eve_runtime.authoring.tools import ToolOptions
from eve_runtime.checkpoint import SessionState
from eve_runtime.engine.ports import Session
from eve_runtime.models.base import ToolDefinition
from eve_runtime.project.builtin_tools import builtin_tool
from eve_runtime.project.manifest import SourceInfo, ToolManifest
from eve_runtime.project.runtime_agent import RuntimeAgent, RuntimeTool

__all__ = [
    "SEARCH",
    "caller_of",
    "connection_definitions",
    "connection_of",
    "connection_tool",
    "search_active",
    "tool_info",
]

SEARCH = "connection_search"
MAX_RESULTS = 10
_WORD = re.compile(r"[a-z0-9]+")


def search_active(agent: RuntimeAgent) -> bool:
    """Whether the agent offers `connection_search` (it has connections, and no tool file replaced it)."""
    if not agent.connections or SEARCH in agent.tools:
        return False
    return any(t.name == SEARCH and t.status == "active" for t in agent.manifest.framework_tools)


def connection_of(agent: RuntimeAgent, name: str) -> tuple[str, ConnectionDefinition, str] | None:
    """`(connection, definition, tool)` for a qualified name of one of the agent's connections."""
    connection, separator, tool = name.partition(SEPARATOR)
    definition = agent.connections.get(connection)
    if not separator or not tool or definition is None:
        return None
    return connection, definition, tool


def caller_of(session: Session, connection: str) -> AuthContext:
    """Whose call it is, as `get_token` and the token store see it."""
    principal = session.turn.principal_id if session.state.turn is not None else None
    return AuthContext(connection=connection, session_id=session.session_id, principal_id=principal)


def _entry(info: ConnectionToolInfo) -> dict[str, Any]:
    return {
        "connection": info.connection,
        "name": info.name,
        "description": info.description,
        "inputSchema": dict(info.input_schema),
        "readOnly": info.read_only,
    }


def _found(state: SessionState, agent: RuntimeAgent) -> dict[str, dict[str, Any]]:
    return {
        f"{e['connection']}{SEPARATOR}{e['name']}": e
        for e in state.connection_tools
        if e["connection"] in agent.connections
    }


def connection_definitions(agent: RuntimeAgent, state: SessionState) -> list[ToolDefinition]:
    """What the model is offered: `connection_search`, and the connection tools a search found."""
    if not search_active(agent):
        return []
    search = builtin_tool(SEARCH)
    assert search is not None
    definitions = [ToolDefinition(name=SEARCH, description=search.description, input_schema=search.input_schema)]
    for qualified, entry in _found(state, agent).items():
        definitions.append(
            ToolDefinition(name=qualified, description=entry["description"], input_schema=entry["inputSchema"])
        )
    return definitions


async def tool_info(session: Session, qualified: str) -> ConnectionToolInfo | None:
    """What is known of a connection tool: from the session's searches, else the connection's list."""
    agent = session.agent
    target = connection_of(agent, qualified)
    if target is None:
        return None
    connection, definition, tool = target
    entry = _found(session.state, agent).get(qualified)
    if entry is not None:
        return ConnectionToolInfo(connection, tool, entry["description"], entry["inputSchema"], entry["readOnly"])
    try:
        listed = await session.host.connections.list_tools(connection, definition, caller_of(session, connection))
    except ConnectionCallError:
        return None
    return next((t for t in listed if t.name == tool), None)


def _score(info: ConnectionToolInfo, words: list[str]) -> int:
    if not words:
        return 1
    name = info.name.lower()
    text = f"{info.connection} {name} {info.description.lower()}"
    return sum(3 if word in name else 1 for word in words if word in text)


async def _search(session: Session, arguments: dict[str, Any]) -> Any:
    agent = session.agent
    query = str(arguments.get("query", "")).lower()
    only = arguments.get("connection")
    words = [] if query.strip() in ("", "*") else _WORD.findall(query)
    found: list[tuple[int, ConnectionToolInfo]] = []
    problems: dict[str, str] = {}
    for connection, definition in agent.connections.items():
        if only and connection != only:
            continue
        try:
            listed = await session.host.connections.list_tools(connection, definition, caller_of(session, connection))
        except ConnectionCallError as exc:
            problems[connection] = exc.message
            continue
        found.extend((score, info) for info in listed if (score := _score(info, words)) > 0)
    found.sort(key=lambda pair: (-pair[0], pair[1].qualified))
    chosen = [info for _score_, info in found[:MAX_RESULTS]]
    known = {(e["connection"], e["name"]) for e in session.state.connection_tools}
    for info in chosen:
        if (info.connection, info.name) not in known:
            session.state.connection_tools.append(_entry(info))
    result: dict[str, Any] = {
        "tools": [{"name": info.qualified, "description": info.description} for info in chosen],
    }
    if problems:
        result["unavailable"] = problems
    if not chosen:
        result["note"] = "No connection tool matches; try other words, or '*' to list them all."
    return result


def _manifest(name: str, description: str, schema: dict[str, Any]) -> ToolManifest:
    return ToolManifest(
        name=name,
        description=description,
        input_schema=schema,
        kind="async",
        approval="never",
        source=SourceInfo(
            logical_path=SEARCH, source_id=f"eve:connections:{name}", source_kind="framework", owner="framework"
        ),
    )


def connection_tool(session: Session, name: str, info: ConnectionToolInfo | None = None) -> RuntimeTool | None:
    """The engine's view of `connection_search` or of a connection tool, for this session (None: neither)."""
    agent = session.agent
    if name == SEARCH and search_active(agent):

        async def search(arguments: dict[str, Any], _context: Any) -> Any:
            return await _search(session, arguments)

        return RuntimeTool(manifest=_manifest(name, SEARCH, {"type": "object"}), invoke=search)
    target = connection_of(agent, name)
    if target is None:
        return None
    connection, definition, tool = target

    async def call(arguments: dict[str, Any], _context: Any) -> Any:
        caller = caller_of(session, connection)
        try:
            return await session.host.connections.call(connection, definition, tool, arguments, caller)
        except ConnectionCallError as exc:
            return {"code": exc.code, "message": exc.message}

    policy = definition.approval
    approval = policy if isinstance(policy, bool) or callable(policy) else False
    options = ToolOptions(needs_approval=approval, to_model_output=content_text)
    description = info.description if info is not None else name
    return RuntimeTool(
        manifest=_manifest(name, description, {"type": "object"}),
        options=options,
        invoke=call,
        read_only=info.read_only if info is not None else False,
    )
