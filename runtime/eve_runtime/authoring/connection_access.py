"""The port through which sessions reach their agent's connections (the runtime provides it).

The engine never imports `eve_runtime.connections`: it asks this Protocol for a connection's
tools, for whether a call needs someone to sign in first, and to make a call. The runtime's
`ConnectionManager` implements it and keeps the live MCP sessions, the parsed OpenAPI documents
and the tokens people supplied (in memory only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from eve_runtime.authoring.connections import AuthContext, ConnectionDefinition

__all__ = [
    "ConnectionAccess",
    "ConnectionCallError",
    "ConnectionToolInfo",
    "SignIn",
    "SignInCallbackError",
    "content_text",
]

SEPARATOR = "__"
"""Between a connection's name and its tool's name in what the model calls (`linear__create_issue`)."""


@dataclass(frozen=True)
class ConnectionToolInfo:
    """One tool of a connection, as the model may be offered it."""

    connection: str
    name: str
    """The server's own name for it (an MCP tool name, an OpenAPI `operationId`)."""
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool = False
    """Declared as changing nothing (MCP `readOnlyHint`, an OpenAPI safe method): what `auto()` reads."""

    @property
    def qualified(self) -> str:
        return f"{self.connection}{SEPARATOR}{self.name}"


@dataclass(frozen=True)
class SignIn:
    """A connection needs a token before its calls can go out (what `authorization.required` shows)."""

    connection: str
    description: str
    url: str | None = None
    instructions: str = ""
    handle: str | None = None
    """The runtime's own name for a sign-in under way (an OAuth flow), handed back by `sign_in_awaited`."""


class ConnectionCallError(Exception):
    """A connection could not be used: `code` is stable (`CONNECTION_UNAVAILABLE`, `MCP_ERROR`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SignInCallbackError(Exception):
    """An OAuth callback that matches no sign-in under way, or misses its code: answered with `status`."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


class ConnectionAccess(Protocol):
    """What the engine needs of the runtime's connections."""

    async def list_tools(
        self, name: str, definition: ConnectionDefinition, caller: AuthContext
    ) -> list[ConnectionToolInfo]:
        """The connection's tools after its filter (listed at first need, cached until they change).

        Raises `ConnectionCallError` when the server cannot be reached.
        """
        ...

    async def sign_in_needed(self, name: str, definition: ConnectionDefinition, caller: AuthContext) -> SignIn | None:
        """None when a call can go out now (no auth, or a token is at hand); else what to ask for."""
        ...

    def sign_in_awaited(self, sign_in: SignIn, session_id: str, request_id: str) -> None:
        """A parked request (`request_id`, the `attemptId`) waits for `sign_in`: resume it once it completes."""
        ...

    def sign_in_settled(self, session_id: str, request_id: str) -> None:
        """That request was answered or withdrawn: it waits for no sign-in any more."""
        ...

    async def call(
        self, name: str, definition: ConnectionDefinition, tool: str, arguments: Mapping[str, Any], caller: AuthContext
    ) -> Any:
        """Make one call; its JSON result (`{"code", "message"}` for a failure the tool reported).

        Raises `ConnectionCallError` when the call could not be made.
        """
        ...


def content_text(output: Any) -> Any:
    """What the model reads of a connection result: an MCP result's content blocks as text.

    Never its `structuredContent` or `_meta`; any other result (an OpenAPI answer, a failure) as it is.
    """
    if not (isinstance(output, Mapping) and isinstance(output.get("content"), list) and "code" not in output):
        return output
    parts = []
    for block in output["content"]:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "file":
            parts.append(f"[file: {block.get('mediaType', 'application/octet-stream')}]")
        else:
            parts.append(str(block.get("text") or f"[resource: {block.get('uri')}]"))
    return "\n".join(parts)
