"""The compiler: an app folder in, a manifest plus loaded runtime objects out.

`compile_app` discovers the sources, loads user modules under a fresh namespace, composes
every agent, and writes the artifacts under `.eve/` (on failure too, so a broken build can be
inspected): `discovery/diagnostics.json`, `discovery/agent-discovery-manifest.json`,
`compile/manifest.json` and `compile/compile-metadata.json`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from eve_runtime._version import __version__
from eve_runtime.authoring.state import defined_states
from eve_runtime.diagnostics import Diagnostic, has_errors, summarize
from eve_runtime.project.compile_agent import compile_agent
from eve_runtime.project.discovery import IGNORED_ROOT_DIRECTORIES, discover
from eve_runtime.project.grammar import list_entries
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.paths import AppPaths
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.project.sources import SourceGraph
from eve_runtime.redaction import REDACTOR

__all__ = ["CompiledApp", "compile_app", "source_digest", "write_artifacts"]


@dataclass
class CompiledApp:
    """A compiled app: the manifest, the source graph, and (when it compiled) the runnable root agent."""

    paths: AppPaths
    manifest: Manifest
    graph: SourceGraph
    root: RuntimeAgent | None
    """None when the app has errors."""
    loader: ModuleLoader
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.root is not None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.manifest.diagnostics


def compile_app(app_root: Path, *, write: bool = True) -> CompiledApp:
    """Compile the app at `app_root` (the folder holding `agent/`).

    Never raises for problems in the user's project: they are diagnostics in the manifest, and
    `root` is None when any is an error. A failed compile releases the modules it loaded.
    """
    started = time.perf_counter()
    paths = AppPaths(app_root.resolve())
    graph = discover(paths.app_root)
    diagnostics = list(graph.diagnostics)
    loader = ModuleLoader(paths.agent_root)
    root = compile_agent(graph.root, loader, diagnostics, app_root=paths.app_root)
    failed = root is None or has_errors(diagnostics)
    if failed:
        loader.release()
    manifest = Manifest(
        eve_version=__version__,
        app_root=str(paths.app_root),
        agent_root=str(paths.agent_root),
        status="failed" if failed else "ready",
        root=root.manifest if root is not None else None,
        diagnostics=_ordered(diagnostics),
        source_digest=source_digest(paths.agent_root),
    ).with_hash()
    if not failed and root is not None:
        _stamp(root, manifest.content_hash, loader)
    compiled = CompiledApp(
        paths=paths,
        manifest=manifest,
        graph=graph,
        root=None if failed else root,
        loader=loader,
        duration_ms=(time.perf_counter() - started) * 1000,
    )
    if write:
        write_artifacts(compiled)
    return compiled


def _stamp(root: RuntimeAgent, deployment: str, loader: ModuleLoader) -> None:
    """Mark every agent of a build with the build's id and the `define_state` keys its code defines.

    A key counts when a handle alive now was defined by this generation's modules, or by a module
    outside every generation (a library the app imports).
    """
    keys = frozenset(
        name for name, module in defined_states() if loader.owns(module) or not ModuleLoader.is_user_module(module)
    )
    for agent in root.walk():
        agent.deployment = deployment
        agent.state_keys = keys


def _ordered(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Errors first, then warnings, each in the order found; duplicates dropped."""
    unique = list(dict.fromkeys(diagnostics))
    return [d for d in unique if d.severity == "error"] + [d for d in unique if d.severity == "warning"]


def source_digest(agent_root: Path) -> str:
    """SHA-256 over the relative path and bytes of every source file under the agent folder."""
    digest = hashlib.sha256()

    def add(path: Path) -> None:
        digest.update(path.relative_to(agent_root).as_posix().encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
        digest.update(b"\0")

    def visit(folder: Path) -> None:
        init = folder / "__init__.py"
        if init.is_file():
            add(init)  # a package's code (a tool package, lib/): list_entries leaves it out, it is never a slot
        for entry in list_entries(folder):
            if entry.is_dir:
                if entry.name not in IGNORED_ROOT_DIRECTORIES:  # .venv, node_modules, caches: never sources
                    visit(entry.path)
            else:
                add(entry.path)

    if agent_root.is_dir():
        visit(agent_root)
    return f"sha256:{digest.hexdigest()}"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(REDACTOR.text(text), encoding="utf-8")  # no secret in .eve/ (eve_runtime.redaction)
    os.replace(temporary, path)


def write_artifacts(compiled: CompiledApp) -> None:
    """Write the discovery and compile artifacts under `.eve/`."""
    paths = compiled.paths
    manifest = compiled.manifest
    summary = summarize(manifest.diagnostics)
    diagnostics = {
        "errors": summary.errors,
        "warnings": summary.warnings,
        "diagnostics": [d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in manifest.diagnostics],
    }
    _write(paths.diagnostics_file, json.dumps(diagnostics, indent=2) + "\n")
    _write(paths.discovery_manifest_file, compiled.graph.model_dump_json(indent=2) + "\n")
    _write(paths.manifest_file, manifest.to_json())
    metadata = {
        "eveVersion": __version__,
        "status": manifest.status,
        "contentHash": manifest.content_hash,
        "sourceDigest": manifest.source_digest,
        "compiledAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "durationMs": round(compiled.duration_ms, 2),
        "errors": summary.errors,
        "warnings": summary.warnings,
    }
    _write(paths.compile_metadata_file, json.dumps(metadata, indent=2) + "\n")
