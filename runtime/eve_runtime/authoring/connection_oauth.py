"""OAuth sign-in for MCP connections over HTTP, through the `mcp` SDK's own OAuth client.

```python
# agent/connections/tracker.py
from eve_runtime import connection_auth, define_mcp_client_connection, mcp_oauth

tracker = define_mcp_client_connection(
    url="https://mcp.tracker.example/mcp",
    description="Read and file issues.",
    auth=connection_auth(oauth=mcp_oauth(client_name="Support agent"), credential_owner="user"),
)
```

When the server answers 401, the SDK discovers its authorization server, registers this app as
a client (dynamic client registration) and builds an authorization URL with PKCE; the turn
parks on `authorization.required` showing that URL. The person's browser comes back to
`GET /eve/v1/connections/<name>/callback`, the SDK exchanges the code, and the turn goes on.
Tokens and the client registration stay in the server's memory; the SDK refreshes an expired
access token with its refresh token.
"""

from __future__ import annotations

from dataclasses import dataclass

from eve_runtime.errors import DefinitionError

__all__ = ["McpOAuth", "mcp_oauth"]


@dataclass(frozen=True)
class McpOAuth:
    """How an MCP connection signs in with OAuth (see `mcp_oauth`)."""

    client_name: str = "eve agent"
    client_metadata_url: str | None = None


def mcp_oauth(*, client_name: str = "eve agent", client_metadata_url: str | None = None) -> McpOAuth:
    """Sign in to an MCP server with OAuth 2.1 (authorization code + PKCE), as the MCP specification says.

    Pass it as `connection_auth(oauth=mcp_oauth(...))` on a `url=` connection. The scopes are the
    ones the server asks for (its `WWW-Authenticate` challenge or its protected-resource metadata),
    as the MCP specification's scope selection says.

    Args:
        client_name: The name this app registers under (authorization servers show it on their consent page).
        client_metadata_url: An HTTPS URL of a client metadata document to use as the client id where the
            authorization server supports it (instead of registering).
    """
    if not isinstance(client_name, str) or not client_name.strip():
        raise DefinitionError("mcp_oauth(client_name=) must be a non-empty string.")
    if client_metadata_url is not None and not (
        isinstance(client_metadata_url, str) and client_metadata_url.startswith("https://")
    ):
        raise DefinitionError(f"mcp_oauth(client_metadata_url=) must be an https:// URL, not {client_metadata_url!r}.")
    return McpOAuth(client_name.strip(), client_metadata_url)
