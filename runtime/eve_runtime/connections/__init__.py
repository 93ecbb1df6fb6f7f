"""MCP and OpenAPI connections turned into tools: the live clients behind `ConnectionAccess`.

`ConnectionManager` (one per process, owned by the runtime) lists a connection's tools at first
need, calls them, and keeps the tokens people supply. MCP goes through the official `mcp` SDK
over stdio or streamable HTTP (`mcp_link`); OpenAPI documents are parsed here and called with
httpx (`openapi`); `results` maps MCP results to eve tool results. The engine never imports
this package: it reaches it through `eve_runtime.authoring.connection_access.ConnectionAccess`.
"""

from eve_runtime.connections.manager import ConnectionManager, model_text

__all__ = ["ConnectionManager", "model_text"]
