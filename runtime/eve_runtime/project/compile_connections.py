"""Compiling an agent's connections: load each `connections/<name>.py` and check its name against the tools.

A connection owns its name and the prefix `<name>__`: a tool, a subagent or a dynamic tool
named like it, or starting with the prefix, collides (an error naming both files). A module
that holds no connection, or one whose `protocol` is neither `mcp` nor `openapi`, is an error
that says what to write. A relative OpenAPI `spec=` path is read from the connection's folder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compose_tools import source_info
from eve_runtime.project.definitions import Found, find_definition
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import ConnectionManifest
from eve_runtime.project.sources import AgentSources, NamedSource

if TYPE_CHECKING:
    from eve_runtime.authoring.connections import ConnectionDefinition

__all__ = ["CompiledConnections", "check_collisions", "compile_connections"]

PROTOCOLS = ("mcp", "openapi")


@dataclass
class CompiledConnections:
    """An agent's connections: what info shows, and the definitions the runtime connects with."""

    manifests: list[ConnectionManifest] = field(default_factory=list)
    definitions: dict[str, ConnectionDefinition] = field(default_factory=dict)
    sources: dict[str, NamedSource] = field(default_factory=dict)


def _unknown_protocol(module: ModuleType) -> str | None:
    for attribute, value in vars(module).items():
        if attribute.startswith("_"):
            continue
        protocol = value.get("protocol") if isinstance(value, dict) else getattr(value, "protocol", None)
        if isinstance(protocol, str) and protocol not in PROTOCOLS:
            return protocol
    return None


def _manifest(named: NamedSource, definition: ConnectionDefinition, node_id: str, export: str) -> ConnectionManifest:
    from eve_runtime.authoring.connections import McpClientConnection

    return ConnectionManifest(
        connection_name=named.name,
        description=definition.description,
        protocol=definition.protocol,
        transport=definition.transport if isinstance(definition, McpClientConnection) else "http",
        url=definition.shown_url(),
        has_approval=definition.approval is not None and definition.approval is not False,
        has_authorization=definition.auth is not None,
        has_headers=bool(definition.headers),
        tool_filter=definition.tools.describe(),
        source=source_info(node_id, named, export=export),
    )


def compile_connections(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> CompiledConnections:
    """Load the agent's connection files (problems become diagnostics; a bad file is left out)."""
    node_id = sources.node_id
    compiled = CompiledConnections()
    if not sources.connections:
        return compiled  # and the authoring API of connections stays unimported (`eve info`'s time)
    from eve_runtime.authoring.connections import McpClientConnection, OpenApiConnection

    for named in sources.connections:
        path = named.source.path
        module = loader.load_into(path, diagnostics, node_id=node_id)
        if module is None:
            continue
        found = find_definition(
            module,
            (McpClientConnection, OpenApiConnection),
            path=path,
            what="connection",
            example=f'{named.name.replace("-", "_")} = define_mcp_client_connection(url="https://.../mcp", '
            'description="...")',
            node_id=node_id,
            preferred=named.name.replace("-", "_"),
        )
        if not isinstance(found, Found):
            protocol = _unknown_protocol(module)
            if protocol is not None:
                found = dg.error(
                    "compile/connection-protocol-unknown",
                    f"{named.source.logical_path} defines a connection with protocol {protocol!r}; eve connects "
                    "to 'mcp' (define_mcp_client_connection) and 'openapi' (define_openapi_connection) only.",
                    path,
                    node_id=node_id,
                )
            diagnostics.append(found)
            continue
        definition: ConnectionDefinition = found.value
        if isinstance(definition, OpenApiConnection) and definition.spec_base is None:
            definition = dataclasses.replace(definition, spec_base=str(path.parent))
        compiled.definitions[named.name] = definition
        compiled.sources[named.name] = named
        compiled.manifests.append(_manifest(named, definition, node_id, found.name))
    return compiled


def check_collisions(
    connections: CompiledConnections,
    names: Iterable[tuple[str, str]],
    sources: AgentSources,
    diagnostics: list[Diagnostic],
) -> None:
    """Report every tool or subagent (`(name, where)` pairs) named like a connection or inside its prefix."""
    if not connections.sources:
        return
    from eve_runtime.authoring.connection_access import SEPARATOR

    for name, where in names:
        for connection, named in connections.sources.items():
            if name == connection or name.startswith(connection + SEPARATOR):
                diagnostics.append(
                    dg.error(
                        "compile/connection-name-collision",
                        f"{where} is named {name!r}, which belongs to connection {connection!r} "
                        f"({named.source.logical_path} owns {connection!r} and every name starting with "
                        f"'{connection}{SEPARATOR}'). Rename one of them.",
                        named.source.path,
                        node_id=sources.node_id,
                    )
                )
