"""OpenAPI 3.0 and 3.1 documents as tools: one per operation, named by its `operationId`.

A tool's input holds the operation's path, query and header parameters by name, and `body` for
a JSON request body; local `$ref`s (`#/components/...`) are resolved. A call fills the path,
sends the rest through httpx with the connection's headers and token, and returns
`{"status", "body"}` (the JSON body, or its text); a status of 400 or more is a failure
`{"code": "HTTP_<status>", "message"}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

import httpx
import yaml

from eve_runtime.authoring.connection_access import ConnectionCallError, ConnectionToolInfo
from eve_runtime.authoring.connections import OpenApiConnection

__all__ = ["OpenApiDocument", "Operation", "call_operation", "load_document"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SAFE_METHODS = frozenset({"get", "head", "options", "trace"})
_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class Parameter:
    name: str
    where: str
    """`path`, `query` or `header`."""
    required: bool


@dataclass(frozen=True)
class Operation:
    """One operation of the document."""

    tool: ConnectionToolInfo
    method: str
    path: str
    parameters: tuple[Parameter, ...]
    has_body: bool


@dataclass(frozen=True)
class OpenApiDocument:
    """A parsed document: its operations by tool name, and where calls go."""

    operations: dict[str, Operation]
    base_url: str


async def _read(definition: OpenApiConnection) -> tuple[Any, str | None]:
    """The document's data, and the URL it came from (for relative `servers`)."""
    spec = definition.spec
    if spec.startswith(("http://", "https://")):
        try:
            async with httpx.AsyncClient(timeout=definition.timeout, follow_redirects=True) as client:
                response = await client.get(spec, headers=definition.resolved_headers())
                response.raise_for_status()
        except httpx.HTTPError as exc:
            raise ConnectionCallError(
                "CONNECTION_UNAVAILABLE", f"cannot fetch the OpenAPI document ({type(exc).__name__})"
            ) from None
        text, origin = response.text, str(response.url)
    else:
        path = Path(spec)
        if not path.is_absolute() and definition.spec_base:
            path = Path(definition.spec_base) / path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConnectionCallError(
                "CONNECTION_UNAVAILABLE", f"cannot read the OpenAPI document ({type(exc).__name__}: check spec=)"
            ) from None
        origin = None
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConnectionCallError("OPENAPI_INVALID", f"the OpenAPI document is not JSON or YAML: {exc}") from None
    return data, origin


def _resolve(node: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """The node with its local `$ref`s replaced (cycles are cut after a few levels)."""
    if depth > 12:
        return {}
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for part in ref[2:].split("/"):
                target = (
                    target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, Mapping) else {}
                )
            return _resolve(target, root, depth + 1)
        return {key: _resolve(value, root, depth + 1) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolve(item, root, depth + 1) for item in node]
    return node


def _operation(connection: str, method: str, path: str, item: Mapping[str, Any], op: Mapping[str, Any]) -> Operation:
    raw_id = op.get("operationId") or f"{method}_{path}"
    name = _NAME.sub("_", str(raw_id)).strip("_")[:64] or method
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[Parameter] = []
    for parameter in [*item.get("parameters", []), *op.get("parameters", [])]:
        where = parameter.get("in")
        if where not in ("path", "query", "header") or "name" not in parameter:
            continue
        schema = dict(parameter.get("schema") or {"type": "string"})
        if parameter.get("description"):
            schema["description"] = parameter["description"]
        properties[parameter["name"]] = schema
        is_required = bool(parameter.get("required")) or where == "path"
        if is_required:
            required.append(parameter["name"])
        parameters = [p for p in parameters if p.name != parameter["name"]]
        parameters.append(Parameter(parameter["name"], where, is_required))
    body = (op.get("requestBody") or {}).get("content", {}).get("application/json")
    if body is not None:
        properties["body"] = body.get("schema") or {}
        if (op.get("requestBody") or {}).get("required"):
            required.append("body")
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = sorted(set(required))
    description = op.get("summary") or op.get("description") or f"{method.upper()} {path}"
    if op.get("summary") and op.get("description"):
        description = f"{op['summary']}. {op['description']}"
    tool = ConnectionToolInfo(connection, name, str(description), input_schema, read_only=method in SAFE_METHODS)
    return Operation(tool, method, path, tuple(parameters), body is not None)


async def load_document(connection: str, definition: OpenApiConnection) -> OpenApiDocument:
    """Read and parse the connection's document. Raises `ConnectionCallError` when it cannot be used."""
    data, origin = await _read(definition)
    if not isinstance(data, Mapping) or not str(data.get("openapi", "")).startswith("3."):
        raise ConnectionCallError(
            "OPENAPI_INVALID", "the document is not OpenAPI 3.0 or 3.1 (it needs `openapi: 3.x` and `paths`)"
        )
    operations: dict[str, Operation] = {}
    for path, item in (data.get("paths") or {}).items():
        item = _resolve(item, data)
        if not isinstance(item, Mapping):
            continue
        for method in METHODS:
            if isinstance(item.get(method), Mapping):
                operation = _operation(connection, method, str(path), item, item[method])
                operations[operation.tool.name] = operation
    base = definition.base_url
    if base is None:
        servers = data.get("servers") or []
        server = str(servers[0].get("url", "")) if servers and isinstance(servers[0], Mapping) else ""
        if server.startswith(("http://", "https://")):
            base = server
        elif origin is not None:
            base = urljoin(origin, server or "/")
        else:
            raise ConnectionCallError(
                "OPENAPI_INVALID", "the document has no absolute `servers` URL: pass base_url= to the connection"
            )
    return OpenApiDocument(operations, base.rstrip("/"))


async def call_operation(
    document: OpenApiDocument,
    definition: OpenApiConnection,
    operation: Operation,
    arguments: Mapping[str, Any],
    headers: dict[str, str],
) -> Any:
    """Send one call; `{"status", "body"}`, or a `{"code", "message"}` failure for an error status."""
    path = operation.path
    query: dict[str, Any] = {}
    sent = dict(headers)
    for parameter in operation.parameters:
        if parameter.name not in arguments:
            if parameter.required:
                return {"code": "INVALID_TOOL_INPUT", "message": f"{parameter.name!r} is required"}
            continue
        value = arguments[parameter.name]
        if parameter.where == "path":
            path = path.replace("{" + parameter.name + "}", quote(str(value), safe=""))
        elif parameter.where == "query":
            query[parameter.name] = json.dumps(value) if isinstance(value, (dict, list)) else value
        else:
            sent[parameter.name] = str(value)
    body = arguments.get("body") if operation.has_body else None
    try:
        async with httpx.AsyncClient(timeout=definition.timeout) as client:
            response = await client.request(
                operation.method.upper(),
                document.base_url + path,
                params=query,
                headers=sent,
                json=body if body is not None else None,
            )
    except httpx.TimeoutException:
        raise ConnectionCallError("CONNECTION_TIMEOUT", f"no answer within {definition.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise ConnectionCallError(
            "CONNECTION_UNAVAILABLE", f"the API cannot be reached: {type(exc).__name__}"
        ) from None
    try:
        payload: Any = response.json()
    except ValueError:
        payload = response.text
    if response.status_code >= 400:
        detail = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        return {"code": f"HTTP_{response.status_code}", "message": f"HTTP {response.status_code}: {detail[:2000]}"}
    return {"status": response.status_code, "body": payload}
