"""Discovering an agent's sandbox: `sandbox.py`, or the folder form `sandbox/sandbox.py` with `sandbox/workspace/`.

Neither is required (the framework's default sandbox applies). The folder form adds the seed,
`sandbox/workspace/**`, copied into every new workspace. Both forms at once collide.
"""

from __future__ import annotations

from pathlib import Path

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.grammar import Entry, list_entries
from eve_runtime.project.sources import Source

__all__ = ["discover_sandbox"]

_IGNORED = frozenset({"__pycache__", ".DS_Store"})


def discover_sandbox(
    root: Path, by_name: dict[str, Entry], node_id: str, diagnostics: list[Diagnostic]
) -> tuple[Source | None, Path | None]:
    """`sandbox.py`, or the folder form `sandbox/sandbox.py` with its seed `sandbox/workspace/`."""
    flat = by_name.get("sandbox.py")
    source = Source(logical_path="sandbox.py", path=flat.path, kind="module") if flat and not flat.is_dir else None
    folder = by_name.get("sandbox")
    if folder is None:
        return source, None
    if not folder.is_dir:
        diagnostics.append(
            dg.error(
                "discover/sandbox-directory-invalid",
                f"Expected {str(folder.path)!r} to be a folder (sandbox.py and workspace/); it is a file. "
                "Rename or remove it.",
                folder.path,
                node_id=node_id,
            )
        )
        return source, None
    seed: Path | None = None
    for entry in list_entries(folder.path):
        if entry.name == "sandbox.py" and not entry.is_dir:
            if source is not None:
                diagnostics.append(
                    dg.error(
                        "discover/slot-collision",
                        "'sandbox.py' and 'sandbox/sandbox.py' both define the sandbox; keep exactly one of them.",
                        root,
                        node_id=node_id,
                    )
                )
                continue
            source = Source(logical_path="sandbox/sandbox.py", path=entry.path, kind="module")
        elif entry.name == "workspace" and entry.is_dir:
            seed = entry.path
        elif entry.name not in _IGNORED:
            diagnostics.append(
                dg.warning(
                    "discover/unsupported-directory",
                    f"Ignoring {str(entry.path)!r}: a sandbox folder holds sandbox.py and workspace/ (the files "
                    "copied into every new workspace).",
                    entry.path,
                    node_id=node_id,
                )
            )
    return source, seed
