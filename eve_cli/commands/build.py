"""`eve build`: compile the agent and write the manifest and diagnostics under `.eve/`."""

from __future__ import annotations

import typer

from eve_cli._console import err, out, print_diagnostics
from eve_cli.commands._project import compile_current_app

__all__ = ["build"]


def build() -> None:
    """Compile the agent; write .eve/compile/manifest.json and .eve/discovery/diagnostics.json."""
    compiled = compile_current_app()
    manifest = compiled.manifest
    paths = compiled.paths
    print_diagnostics(manifest.diagnostics, err)
    if not compiled.ok:
        err.print(f"[red]Build failed[/]; diagnostics written to {paths.diagnostics_file}")
        raise typer.Exit(1)
    root = manifest.root
    assert root is not None
    out.print(
        f"[bold green]Built[/] {root.name} in {compiled.duration_ms:.0f} ms: {len(root.tools)} tools, "
        f"{len(root.skills)} skills, {len(root.subagents)} subagents, {len(root.schedules)} schedules"
    )
    out.print(f"  manifest     {paths.manifest_file}")
    out.print(f"  diagnostics  {paths.diagnostics_file}")
    out.print(f"  content hash {manifest.content_hash}")
