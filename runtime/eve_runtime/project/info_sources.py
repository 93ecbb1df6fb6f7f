"""How agent info describes sources (with their binding) and connections: split from `info.py`."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from eve_runtime._version import __version__
from eve_runtime.project.manifest import ConnectionManifest, DynamicManifest, SourceInfo

__all__ = ["REVISION", "Sources", "connection_info", "owner_of"]

JSON = dict[str, Any]


REVISION = f"eve-python@{__version__}"
"""The `revision` of a framework default's programmatic backing."""


def owner_of(source: SourceInfo) -> JSON:
    """`owner` of a source, as eve's schema spells it."""
    if source.owner == "application":
        return {"kind": "application"}
    return {"feature": "eve:defaults", "kind": "framework"}


class Sources:
    """Describes the sources of one agent, whose folder (absolute) is `folder`."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __call__(self, source: SourceInfo) -> JSON:
        owner = owner_of(source)
        kind = "module" if source.source_kind == "framework" else source.source_kind
        data: JSON = {
            "logicalPath": source.logical_path,
            "owner": owner,
            "sourceId": source.source_id,
            "sourceKind": kind,
        }
        if kind != "module":
            return data
        backing: JSON
        if source.owner == "application":
            path = str(PurePosixPath(self.folder) / source.logical_path)
            backing = {"externalDependencies": [], "kind": "filesystem", "sourcePath": path}
        else:
            backing = {
                "kind": "programmatic",
                "moduleId": source.logical_path,
                "registryId": "eve:defaults",
                "revision": REVISION,
            }
        data["binding"] = {"backing": backing, "logicalPath": source.logical_path, "owner": owner}
        if source.export_name is not None:
            data["exportName"] = source.export_name
        return data

    def resolver(self, resolver: DynamicManifest) -> JSON:
        return {**self(resolver.source), "slug": resolver.slug, "eventNames": resolver.event_names}


def connection_info(connection: ConnectionManifest, describe: Sources) -> JSON:
    """A connection as agent info shows it (eve's fields; never a secret)."""
    data: JSON = {
        **describe(connection.source),
        "connectionName": connection.connection_name,
        "description": connection.description,
        "protocol": connection.protocol,
        "url": connection.url,
        "hasApproval": connection.has_approval,
        "hasAuthorization": connection.has_authorization,
        "hasHeaders": connection.has_headers,
    }
    if connection.tool_filter is not None:
        data["toolFilter"] = connection.tool_filter
    return data
