"""Discovering an agent's connections: `connections/<name>.py`, one connection per file.

The name is the file's stem: lowercase letters, digits, '-' and single '_', starting with a
letter (eve's names are lowercase kebab; a Python file name may also use '_', but never '__',
which separates a connection's name from its tools' names). Only the file names are read here.
"""

from __future__ import annotations

import re
from pathlib import Path

from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.grammar import NamedDirectory, name_check, walk_named_directory
from eve_runtime.project.sources import NamedSource

__all__ = ["CONNECTION_NAME_PATTERN", "discover_connections"]

CONNECTION_NAME_PATTERN = re.compile(r"^[a-z](?:[a-z0-9-]|_(?!_)){0,63}(?<!_)$")
CONNECTION_NAME_RULE = (
    "use lowercase ASCII letters, digits, '-' and single '_' only, starting with a letter, at most 64 characters"
)


def discover_connections(root: Path, node_id: str, diagnostics: list[Diagnostic]) -> list[NamedSource]:
    """The `connections/*.py` files of the agent at `root`."""
    spec = NamedDirectory(
        name="connections",
        recursive=False,
        check_segment=name_check(
            "discover/connection-name-invalid", "Connection", CONNECTION_NAME_PATTERN, CONNECTION_NAME_RULE, node_id
        ),
        node_id=node_id,
    )
    found = walk_named_directory(root, spec)
    diagnostics.extend(spec.diagnostics)
    return found
