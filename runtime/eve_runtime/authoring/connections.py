"""Connections: `agent/connections/<name>.py` holding an MCP client or an OpenAPI connection.

A connection turns the tools of an MCP server, or the operations of an OpenAPI document, into
tools of the agent. The connection's name is its file's name; its tools are offered to the
model as `<name>__<tool>`, found through the built-in `connection_search` tool. The model never
sees the URL, the command, the headers or the credentials: they stay in the app's process.

```python
# agent/connections/docs.py
from eve_runtime import connection_auth, define_mcp_client_connection, env

docs = define_mcp_client_connection(
    url="https://mcp.example.com/mcp",
    description="Search and read the product documentation.",
    headers={"X-Team": env("DOCS_TEAM")},
    auth=connection_auth(token_env="DOCS_TOKEN"),
)
```

Secrets come from environment variables (`env("NAME")`, `connection_auth(token_env=...)`), read
when a call goes out, or from `connection_auth(get_token=...)`. When no token is found, the turn
parks on an `authorization.required` request until someone supplies one (see `connection_auth`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from eve_runtime.authoring.approval import auto
from eve_runtime.authoring.connection_oauth import McpOAuth
from eve_runtime.errors import DefinitionError

__all__ = [
    "AuthContext",
    "ConnectionAuth",
    "ConnectionDefinition",
    "EnvValue",
    "McpClientConnection",
    "OpenApiConnection",
    "ToolFilter",
    "connection_auth",
    "define_mcp_client_connection",
    "define_openapi_connection",
    "env",
    "public_url",
    "resolve_values",
]

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds a connection call may take before it fails (the MCP specification asks clients for a timeout)."""


@dataclass(frozen=True)
class EnvValue:
    """A value read from an environment variable when a call goes out (never at import, never saved)."""

    name: str
    default: str | None = None

    def resolve(self) -> str | None:
        """The variable's value now (or the default)."""
        return os.environ.get(self.name, self.default)


def env(name: str, default: str | None = None) -> EnvValue:
    """A header or argument value taken from the environment variable `name` at call time.

    Args:
        name: The environment variable (`.env` and `.env.local` at the app root are loaded first).
        default: Used when the variable is not set; without one, the header is left out.
    """
    if not name or not isinstance(name, str):
        raise DefinitionError("env() needs the name of an environment variable, e.g. env('LINEAR_TOKEN').")
    return EnvValue(name, default)


HeaderValue = str | EnvValue


@dataclass(frozen=True)
class AuthContext:
    """What `get_token` sees: whose call it is."""

    connection: str
    session_id: str
    principal_id: str | None


TokenGetter = Callable[[AuthContext], "str | Mapping[str, Any] | None | Awaitable[str | Mapping[str, Any] | None]"]


@dataclass(frozen=True)
class ConnectionAuth:
    """How a connection authenticates its calls (see `connection_auth`)."""

    token_env: str | None = None
    get_token: TokenGetter | None = None
    credential_owner: Literal["app", "user"] = "app"
    header: str = "Authorization"
    scheme: str = "Bearer"
    sign_in_url: str | None = None
    instructions: str | None = None
    oauth: McpOAuth | None = None


def connection_auth(
    *,
    token_env: str | None = None,
    get_token: TokenGetter | None = None,
    credential_owner: Literal["app", "user"] = "app",
    header: str = "Authorization",
    scheme: str = "Bearer",
    sign_in_url: str | None = None,
    instructions: str | None = None,
    oauth: McpOAuth | None = None,
) -> ConnectionAuth:
    """The credentials of a connection's calls, sent as `<header>: <scheme> <token>`.

    The token is looked up at each call: `get_token(ctx)` first (it may be async, and may return
    the token or `{"token": ...}`), then the environment variable `token_env`, then a token a
    person supplied for this connection (`POST /eve/v1/connections/<name>/token`). When none is
    found, the call does not go out: the turn parks on `authorization.required` (showing
    `sign_in_url` and `instructions`) and resumes once a token is supplied. Supplied tokens live
    in the server's memory only, never in the store.

    Args:
        token_env: An environment variable holding the token.
        get_token: A function `(AuthContext) -> token | None`.
        credential_owner: `"app"` (one token for every session) or `"user"` (one per principal).
        header: The header the token goes in.
        scheme: Put before the token (`""` for none).
        sign_in_url: Where a person gets a token (shown in `authorization.required`).
        instructions: What a person should do to sign in.
        oauth: `mcp_oauth(...)`: sign in through the MCP server's OAuth instead (MCP `url=` connections only).
    """
    if oauth is not None and (not isinstance(oauth, McpOAuth) or token_env or get_token or sign_in_url):
        raise DefinitionError("oauth= takes mcp_oauth(...) and replaces token_env=, get_token= and sign_in_url=.")
    if credential_owner not in ("app", "user"):
        raise DefinitionError(f"credential_owner must be 'app' or 'user', not {credential_owner!r}.")
    if get_token is not None and not callable(get_token):
        raise DefinitionError("get_token must be a function (AuthContext) -> token or None.")
    return ConnectionAuth(token_env, get_token, credential_owner, header, scheme, sign_in_url, instructions, oauth)


@dataclass(frozen=True)
class ToolFilter:
    """Which of a connection's tools the agent may see: `allow` (only these) or `block` (all but these)."""

    allow: tuple[str, ...] | None = None
    block: tuple[str, ...] = ()

    def admits(self, name: str) -> bool:
        """Whether tool `name` passes the filter."""
        if self.allow is not None and name not in self.allow:
            return False
        return name not in self.block

    def describe(self) -> dict[str, list[str]] | None:
        """The filter as info shows it (None: every tool)."""
        if self.allow is None and not self.block:
            return None
        shown: dict[str, list[str]] = {}
        if self.allow is not None:
            shown["allow"] = list(self.allow)
        if self.block:
            shown["block"] = list(self.block)
        return shown


def _filter(tools: Mapping[str, Sequence[str]] | Sequence[str] | None, what: str) -> ToolFilter:
    if tools is None:
        return ToolFilter()
    if isinstance(tools, Mapping):
        unknown = sorted(set(tools) - {"allow", "block"})
        if unknown:
            raise DefinitionError(f"{what} takes 'allow' and/or 'block' lists, not {unknown}.")
        allow = tools.get("allow")
        return ToolFilter(tuple(allow) if allow is not None else None, tuple(tools.get("block", ())))
    if isinstance(tools, str):
        raise DefinitionError(f"{what} is a list of names, not the string {tools!r}.")
    return ToolFilter(allow=tuple(tools))


def _headers(headers: Mapping[str, HeaderValue] | None) -> dict[str, HeaderValue]:
    found = dict(headers or {})
    for key, value in found.items():
        if not isinstance(value, (str, EnvValue)):
            raise DefinitionError(f"Header {key!r} must be a string or env('NAME'), not {type(value).__name__}.")
    return found


def resolve_values(values: Mapping[str, HeaderValue]) -> dict[str, str]:
    """Strings and `env()` values, with the environment read now (unset ones left out)."""
    out: dict[str, str] = {}
    for key, value in values.items():
        text = value.resolve() if isinstance(value, EnvValue) else value
        if text is not None:
            out[key] = text
    return out


def public_url(url: str) -> str:
    """A URL without its user, password and query (what info may show)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True)
class _Common:
    description: str
    headers: Mapping[str, HeaderValue] = field(default_factory=dict)
    auth: ConnectionAuth | None = None
    approval: object = None
    """`never()`, `once()`, `always()`, `auto()`, True/False, or a function per call (as for tools)."""
    timeout: float = DEFAULT_CALL_TIMEOUT
    tools: ToolFilter = ToolFilter()

    def resolved_headers(self) -> dict[str, str]:
        """The headers with their environment values read now (unset ones left out)."""
        return resolve_values(self.headers)


@dataclass(frozen=True)
class McpClientConnection(_Common):
    """An MCP server reached over streamable HTTP (`url`) or started as a subprocess speaking stdio (`command`)."""

    url: str | None = None
    command: tuple[str, ...] = ()
    env: Mapping[str, HeaderValue] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def protocol(self) -> Literal["mcp"]:
        return "mcp"

    @property
    def transport(self) -> Literal["http", "stdio"]:
        return "http" if self.url is not None else "stdio"

    def shown_url(self) -> str:
        """What info shows as the URL: the URL without secrets, or `stdio:<program>`."""
        if self.url is not None:
            return public_url(self.url)
        return f"stdio:{Path(self.command[0]).name}"


@dataclass(frozen=True)
class OpenApiConnection(_Common):
    """An HTTP API described by an OpenAPI 3.0 or 3.1 document: one tool per operation (by `operationId`)."""

    spec: str = ""
    """A URL, or a file path (relative paths are resolved against the connection file's folder)."""
    base_url: str | None = None
    """Where calls go; default: the document's first `servers` entry."""
    spec_base: str | None = None
    """The folder relative spec paths are read from (set by the compiler)."""

    @property
    def protocol(self) -> Literal["openapi"]:
        return "openapi"

    def shown_url(self) -> str:
        """What info shows: the base URL (or the document's location) without secrets."""
        where = self.base_url or self.spec
        return public_url(where) if "://" in where else where


ConnectionDefinition = McpClientConnection | OpenApiConnection


def _check_common(description: str, auth: ConnectionAuth | None, timeout: float) -> None:
    if not isinstance(description, str) or not description.strip():
        raise DefinitionError(
            "A connection needs a description (the model reads it to decide when to search the connection's tools)."
        )
    if auth is not None and not isinstance(auth, ConnectionAuth):
        raise DefinitionError("auth must be connection_auth(...).")
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise DefinitionError(f"timeout must be a positive number of seconds, not {timeout!r}.")


def define_mcp_client_connection(
    *,
    description: str,
    url: str | None = None,
    command: Sequence[str] | str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, HeaderValue] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, HeaderValue] | None = None,
    auth: ConnectionAuth | None = None,
    approval: object = None,
    tools: Mapping[str, Sequence[str]] | Sequence[str] | None = None,
    tool_call: Mapping[str, Any] | None = None,
) -> McpClientConnection:
    """An MCP server's tools as the agent's tools.

    Args:
        description: What the connection is for (the model reads it).
        url: A streamable-HTTP MCP endpoint (`https://.../mcp`).
        command: Or a program speaking MCP over stdio: a list `["python", "server.py"]` or one program name
            with `args`. It starts at a session's first need and stops when the server stops.
        args: Arguments of `command`.
        env: Environment of the stdio server (values may be `env("NAME")`); it also gets `PATH` and `HOME`.
        cwd: The stdio server's working folder (default: the app root).
        headers: HTTP headers sent with every request (values may be `env("NAME")`).
        auth: `connection_auth(...)`: the token and where it comes from.
        approval: `never()` (default), `once()`, `always()`, `auto()` or a function per call, as for tools.
        tools: `{"allow": [...]}` or `{"block": [...]}` (MCP tool names): what the agent may see.
        tool_call: Call options: `{"timeout": seconds}` (default 60).
    """
    if (url is None) == (command is None):
        raise DefinitionError(
            "define_mcp_client_connection needs exactly one of url= (streamable HTTP) or command= (stdio)."
        )
    argv: tuple[str, ...] = ()
    if command is not None:
        argv = (command,) if isinstance(command, str) else tuple(command)
        argv = (*argv, *args)
        if not argv or not all(isinstance(part, str) and part for part in argv):
            raise DefinitionError("command= must be a program name or a non-empty list of strings.")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise DefinitionError(f"url= must be an http(s) URL, not {url!r}.")
    options = dict(tool_call or {})
    unknown = sorted(set(options) - {"timeout"})
    if unknown:
        raise DefinitionError(f"tool_call takes 'timeout' only, not {unknown}.")
    timeout = options.get("timeout", DEFAULT_CALL_TIMEOUT)
    _check_common(description, auth, timeout)
    if auth is not None and auth.oauth is not None and url is None:
        raise DefinitionError("connection_auth(oauth=...) needs an HTTP MCP server (url=), not command=.")
    return McpClientConnection(
        description=description.strip(),
        headers=_headers(headers),
        auth=auth,
        approval=approval,
        timeout=float(timeout),
        tools=_filter(tools, "tools"),
        url=url,
        command=argv,
        env=_headers(env),
        cwd=cwd,
    )


def define_openapi_connection(
    *,
    spec: str | Path,
    description: str,
    base_url: str | None = None,
    headers: Mapping[str, HeaderValue] | None = None,
    auth: ConnectionAuth | None = None,
    approval: object = None,
    operations: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    timeout: float = DEFAULT_CALL_TIMEOUT,
) -> OpenApiConnection:
    """An OpenAPI 3.0/3.1 document's operations as the agent's tools, named by `operationId`.

    Parameters (path, query, header) and the JSON request body become the tool's input. Calls go
    out through httpx with the connection's headers and auth.

    Args:
        spec: The document: a URL, or a JSON/YAML file (relative to the connection file).
        description: What the API is for (the model reads it).
        base_url: Where calls go (default: the document's first `servers` URL).
        headers: HTTP headers sent with every call (values may be `env("NAME")`).
        auth: `connection_auth(...)`.
        approval: The approval policy; by default operations with an unsafe method (POST, PUT, PATCH,
            DELETE) ask a person first and the others run (`auto()`). Pass `never()` to run all.
        operations: The `operationId`s the agent may use (a list), or `{"allow": [...]}`/`{"block": [...]}`.
        timeout: Seconds a call may take.
    """
    if not isinstance(spec, (str, Path)) or not str(spec):
        raise DefinitionError("define_openapi_connection needs spec= (a URL or a file path of the OpenAPI document).")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise DefinitionError(f"base_url= must be an http(s) URL, not {base_url!r}.")
    _check_common(description, auth, timeout)
    if auth is not None and auth.oauth is not None:
        raise DefinitionError("connection_auth(oauth=...) is for MCP connections; give an OpenAPI connection a token.")
    return OpenApiConnection(
        description=description.strip(),
        headers=_headers(headers),
        auth=auth,
        approval=auto() if approval is None else approval,
        timeout=float(timeout),
        tools=_filter(operations, "operations"),
        spec=str(spec),
        base_url=base_url.rstrip("/") if base_url else None,
    )
