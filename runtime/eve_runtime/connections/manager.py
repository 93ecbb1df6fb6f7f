"""The runtime's connections: live MCP links, parsed OpenAPI documents, tool lists and tokens.

One `ConnectionManager` per process implements the `ConnectionAccess` port. A connection's
tools are listed at its first need and cached; an MCP server's `notifications/tools/list_changed`
drops the cache, so the next need lists them again. Links are keyed by the definition and the
credential in use, so two principals with their own tokens never share a session. Tokens people
supply (`supply_token`) are kept in memory only: they are never written to the store, and a
restarted server asks for them again. A connection with `connection_auth(oauth=...)` signs in
through the MCP SDK's OAuth client instead (`oauth`: its tokens and client registration are
kept in memory too). `close()` stops every link (stdio servers included).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eve_runtime.authoring.connection_access import ConnectionCallError, ConnectionToolInfo, SignIn, content_text
from eve_runtime.authoring.connections import (
    AuthContext,
    ConnectionAuth,
    ConnectionDefinition,
    EnvValue,
    McpClientConnection,
    OpenApiConnection,
    resolve_values,
)

if TYPE_CHECKING:
    from eve_runtime.connections.mcp_link import McpLink
    from eve_runtime.connections.oauth import Grant, OAuthSignIns
    from eve_runtime.connections.openapi import OpenApiDocument

__all__ = ["PUBLIC_URL_ENV", "ConnectionManager", "model_text"]

PUBLIC_URL_ENV = "EVE_PUBLIC_URL"
"""The server's address as a person's browser reaches it: where OAuth sign-ins come back to."""

_Key = tuple[str, int, str]


def _owner_key(auth: ConnectionAuth, caller: AuthContext) -> str:
    return (caller.principal_id or "") if auth.credential_owner == "user" else ""


class ConnectionManager:
    """Every connection of the process's sessions (see the module docstring)."""

    def __init__(self, *, cwd: Path | None = None) -> None:
        self.cwd = cwd
        self._links: dict[_Key, McpLink] = {}
        self._keep: dict[int, ConnectionDefinition] = {}
        self._tools: dict[_Key, list[ConnectionToolInfo]] = {}
        self._documents: dict[int, OpenApiDocument] = {}
        self._tokens: dict[tuple[str, str], str] = {}
        self._listing: dict[_Key, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._oauth: OAuthSignIns | None = None
        self.public_url: str | None = os.environ.get(PUBLIC_URL_ENV) or None
        """Where browsers reach this server (`EVE_PUBLIC_URL`, else the address it listens on)."""

    # -- OAuth ---------------------------------------------------------------------------------

    @property
    def oauth(self) -> OAuthSignIns:
        """The OAuth grants and the sign-ins under way (the MCP SDK is imported at the first need)."""
        if self._oauth is None:
            from eve_runtime.connections.oauth import OAuthSignIns

            self._oauth = OAuthSignIns(self.public_url)
        return self._oauth

    def listening_at(self, url: str) -> None:
        """The server listens at `url`: OAuth redirects come back there unless `EVE_PUBLIC_URL` says otherwise."""
        if self.public_url is None:
            self.public_url = url
            if self._oauth is not None:
                self._oauth.public_url = url

    def sign_in_awaited(self, sign_in: SignIn, session_id: str, request_id: str) -> None:
        if self._oauth is not None:
            self._oauth.awaited(sign_in.handle, session_id, request_id)

    def sign_in_settled(self, session_id: str, request_id: str) -> None:
        if self._oauth is not None:
            self._oauth.settled(session_id, request_id)

    async def complete_sign_in(
        self, name: str, params: dict[str, str]
    ) -> tuple[str, list[tuple[str, str]], str | None]:
        """Finish the OAuth sign-in an OAuth callback names (see `OAuthSignIns.complete`).

        Raises `SignInCallbackError` for a callback that names no sign-in under way.
        """
        return await self.oauth.complete(name, params)

    def _grant(self, name: str, definition: McpClientConnection, caller: AuthContext) -> Grant:
        """The connection's OAuth grant once someone signed in; else why the call cannot go out."""
        assert definition.auth is not None
        grant = self.oauth.grant(name, definition, _owner_key(definition.auth, caller))
        if grant is None:
            raise ConnectionCallError(
                "AUTHORIZATION_REQUIRED",
                f"connection {name!r} signs in with OAuth, but this server does not know the address browsers "
                f"reach it at: set {PUBLIC_URL_ENV}",
            )
        if grant.problem is not None:
            problem, grant.problem = grant.problem, None
            raise ConnectionCallError("CONNECTION_UNAVAILABLE", f"connection {name!r}: cannot sign in: {problem}")
        if not grant.signed_in:
            raise ConnectionCallError(
                "AUTHORIZATION_REQUIRED", f"connection {name!r} signs in with OAuth: no one has signed in yet"
            )
        return grant

    def _link_failure(self, name: str, definition: McpClientConnection, caller: AuthContext, code: str) -> str:
        """The code of a broken link's failure: `AUTHORIZATION_REQUIRED` when the server wants a new sign-in."""
        auth = definition.auth
        if auth is None or auth.oauth is None or self._oauth is None:
            return code
        grant = self._oauth.grants.get((name, _owner_key(auth, caller)))
        if grant is None or not grant.rejected:
            return code
        grant.rejected = False
        return "AUTHORIZATION_REQUIRED"

    # -- tokens ------------------------------------------------------------------------------

    def supply_token(self, connection: str, token: str, *, principal_id: str | None = None) -> None:
        """Keep a token for a connection (for one principal when its credentials are the user's)."""
        self._tokens[(connection, principal_id or "")] = token

    def forget_token(self, connection: str, *, principal_id: str | None = None) -> None:
        """Drop a supplied token (a 401 from the server, or a sign-out)."""
        self._tokens.pop((connection, principal_id or ""), None)

    async def _token(self, name: str, auth: ConnectionAuth, caller: AuthContext) -> str | None:
        if auth.get_token is not None:
            value: Any = auth.get_token(caller)
            if inspect.isawaitable(value):
                value = await value
            if isinstance(value, Mapping):
                value = value.get("token")
            if isinstance(value, str) and value:
                return value
        if auth.token_env:
            found = EnvValue(auth.token_env).resolve()
            if found:
                return found
        return self._tokens.get((name, _owner_key(auth, caller)))

    async def sign_in_needed(self, name: str, definition: ConnectionDefinition, caller: AuthContext) -> SignIn | None:
        auth = definition.auth
        if auth is not None and auth.oauth is not None and isinstance(definition, McpClientConnection):
            return await self.oauth.sign_in_needed(name, definition, _owner_key(auth, caller))
        if auth is None or await self._token(name, auth, caller) is not None:
            return None
        ways = []
        if auth.token_env:
            ways.append(f"set the environment variable {auth.token_env}")
        ways.append(f"POST a token to /eve/v1/connections/{name}/token")
        instructions = auth.instructions or f"Connection {name!r} needs a token: " + ", or ".join(ways) + "."
        return SignIn(
            connection=name, description=definition.description, url=auth.sign_in_url, instructions=instructions
        )

    async def _headers(
        self, name: str, definition: ConnectionDefinition, caller: AuthContext
    ) -> tuple[dict[str, str], str]:
        headers = definition.resolved_headers()
        auth = definition.auth
        if auth is None:
            return headers, ""
        token = await self._token(name, auth, caller)
        if token is None:
            raise ConnectionCallError(
                "AUTHORIZATION_REQUIRED", f"connection {name!r} has no token: someone must sign in first"
            )
        headers[auth.header] = f"{auth.scheme} {token}".strip()
        return headers, token

    # -- MCP -----------------------------------------------------------------------------------

    async def _link(self, name: str, definition: McpClientConnection, caller: AuthContext) -> tuple[_Key, McpLink]:
        grant = None
        if definition.auth is not None and definition.auth.oauth is not None:
            grant = self._grant(name, definition, caller)
            headers, token = definition.resolved_headers(), "oauth:" + _owner_key(definition.auth, caller)
        else:
            headers, token = await self._headers(name, definition, caller)
        key = (name, id(definition), token)
        link = self._links.get(key)
        if link is None:
            from eve_runtime.connections.mcp_link import McpLink  # the mcp SDK is imported at the first MCP need

            environment = resolve_values(definition.env)
            link = McpLink(
                definition,
                headers=headers,
                environment=environment,
                cwd=definition.cwd or (str(self.cwd) if self.cwd else None),
                on_tools_changed=lambda: self._forget(key),
                auth=grant.provider if grant is not None else None,
            )
            self._links[key] = link
            self._keep[id(definition)] = definition
            self._retire_older(key)
        return key, link

    def _retire_older(self, key: _Key) -> None:
        """A new build's definition replaced an older one: close the older links (a stdio server stops)."""
        name, definition_id, token = key
        for old in [k for k in self._links if k[0] == name and k[2] == token and k[1] != definition_id]:
            link = self._links.pop(old)
            self._tools.pop(old, None)
            self._keep.pop(old[1], None)
            task = asyncio.get_running_loop().create_task(link.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def _forget(self, key: _Key) -> None:
        self._tools.pop(key, None)

    async def list_tools(
        self, name: str, definition: ConnectionDefinition, caller: AuthContext
    ) -> list[ConnectionToolInfo]:
        if isinstance(definition, OpenApiConnection):
            document = await self._document(name, definition)
            return [op.tool for op in document.operations.values() if definition.tools.admits(op.tool.name)]
        key, link = await self._link(name, definition, caller)
        cached = self._tools.get(key)
        if cached is not None:
            return cached
        lock = self._listing.setdefault(key, asyncio.Lock())
        async with lock:
            cached = self._tools.get(key)
            if cached is not None:
                return cached
            from eve_runtime.connections.mcp_link import LinkError

            try:
                listed = await link.list_tools()
            except LinkError as exc:
                code = self._link_failure(name, definition, caller, "CONNECTION_UNAVAILABLE")
                raise ConnectionCallError(code, f"connection {name!r}: {_reason(code, exc)}") from None
            tools = [
                ConnectionToolInfo(
                    connection=name,
                    name=tool.name,
                    description=tool.description or tool.title or tool.name,
                    input_schema=tool.inputSchema or {"type": "object", "properties": {}},
                    read_only=bool(tool.annotations and tool.annotations.readOnlyHint),
                )
                for tool in listed
                if definition.tools.admits(tool.name)
            ]
            self._tools[key] = tools
            return tools

    # -- OpenAPI -------------------------------------------------------------------------------

    async def _document(self, name: str, definition: OpenApiConnection) -> OpenApiDocument:
        document = self._documents.get(id(definition))
        if document is None:
            from eve_runtime.connections.openapi import load_document

            document = await load_document(name, definition)
            self._documents[id(definition)] = document
            self._keep[id(definition)] = definition
        return document

    # -- calls ---------------------------------------------------------------------------------

    async def call(
        self, name: str, definition: ConnectionDefinition, tool: str, arguments: Mapping[str, Any], caller: AuthContext
    ) -> Any:
        if not definition.tools.admits(tool):
            raise ConnectionCallError("UNKNOWN_TOOL", f"connection {name!r} does not offer a tool named {tool!r}")
        if isinstance(definition, OpenApiConnection):
            document = await self._document(name, definition)
            operation = document.operations.get(tool)
            if operation is None:
                raise ConnectionCallError("UNKNOWN_TOOL", f"connection {name!r} has no operation {tool!r}")
            headers, _token = await self._headers(name, definition, caller)
            from eve_runtime.connections.openapi import call_operation

            return await call_operation(document, definition, operation, arguments, headers)
        _key, link = await self._link(name, definition, caller)
        from eve_runtime.connections.mcp_link import LinkError
        from eve_runtime.connections.results import tool_output

        try:
            result = await link.call_tool(tool, dict(arguments))
        except LinkError as exc:
            code = "CONNECTION_INTERRUPTED" if exc.delivered else "CONNECTION_UNAVAILABLE"
            code = self._link_failure(name, definition, caller, code)
            raise ConnectionCallError(code, f"connection {name!r}: {_reason(code, exc)}") from None
        except Exception as exc:  # an MCP error response (unknown tool, invalid params)
            error = getattr(exc, "error", None)
            message = getattr(error, "message", None) or str(exc) or type(exc).__name__
            return {"code": "MCP_ERROR", "message": f"Tool call failed: {message}"}
        return tool_output(result)

    async def close(self) -> None:
        """Close every link (stdio servers stop) and forget the cached lists."""
        links = list(self._links.values())
        self._links.clear()
        self._tools.clear()
        self._documents.clear()
        self._keep.clear()
        await asyncio.gather(*(link.close() for link in links), *self._closing, return_exceptions=True)
        if self._oauth is not None:
            await self._oauth.close()


def _reason(code: str, exc: Exception) -> str:
    if code == "AUTHORIZATION_REQUIRED":
        return "the MCP server no longer accepts the sign-in (the call was not made): the next call asks for a new one"
    return str(exc)


def model_text(output: Any) -> str:
    """What the model reads of a connection result, as text."""
    value = content_text(output)
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
