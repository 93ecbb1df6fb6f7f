"""`eve info`: compile without serving and show what eve will run."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from eve_cli._console import out
from eve_cli.commands._project import compile_current_app

__all__ = ["info"]


def info(
    as_json: Annotated[bool, typer.Option("--json", help="Print the agent-info document (version 6) as JSON.")] = False,
) -> None:
    """Show the agent: model, instructions, tools, skills, subagents, routes and diagnostics."""
    from eve_runtime.project.info import cli_info

    compiled = compile_current_app()
    if as_json:
        typer.echo(json.dumps(cli_info(compiled), indent=2))  # cli_info masks secrets
    else:
        from eve_runtime.redaction import REDACTOR

        with out.capture() as captured:  # rendered, then masked like the JSON (eve_runtime.redaction)
            from eve_cli._render import render_info  # rich, only when printing

            render_info(compiled, out)
        sys.stdout.write(REDACTOR.text(captured.get()))
    if not compiled.ok:
        raise typer.Exit(1)
