"""MCP tool results as eve tool results, and what the model reads of them.

A result's output is `{"content": [...]}` (plus `structuredContent` when the server sent it):
text blocks stay text, images and audio become file parts `{"type": "file", "mediaType", "data"}`
(base64), embedded resources keep their URI and text. The model reads the content blocks only,
never `_meta` or `structuredContent`. A result with `isError` is a failure: `{"code":
"MCP_TOOL_ERROR", "message": "Tool call failed: <the server's text>"}`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types as mcp_types

from eve_runtime.authoring.connection_access import content_text

__all__ = ["tool_output"]


def _block(block: Any) -> dict[str, Any]:
    if isinstance(block, mcp_types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
        return {"type": "file", "mediaType": block.mimeType, "data": block.data}
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        shown: dict[str, Any] = {"type": "resource", "uri": str(resource.uri)}
        if isinstance(resource, mcp_types.TextResourceContents):
            shown["text"] = resource.text
        elif isinstance(resource, mcp_types.BlobResourceContents):
            shown.update({"type": "file", "data": resource.blob})
        if resource.mimeType:
            shown["mediaType"] = resource.mimeType
        return shown
    if isinstance(block, mcp_types.ResourceLink):
        return {"type": "resource", "uri": str(block.uri), "name": block.name}
    return {"type": "text", "text": json.dumps(block.model_dump(mode="json", exclude_none=True))}


def tool_output(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """The eve tool output of one MCP result (a `{"code", "message"}` failure when `isError`)."""
    blocks = [_block(block) for block in result.content]
    if result.isError:
        text = content_text({"content": blocks}) or "the tool reported an error without a message"
        return {"code": "MCP_TOOL_ERROR", "message": f"Tool call failed: {text}", "content": blocks}
    output: dict[str, Any] = {"content": blocks}
    if result.structuredContent is not None:
        output["structuredContent"] = result.structuredContent
    return output
