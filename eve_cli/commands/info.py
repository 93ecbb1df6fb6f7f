"""`eve info`: compile without serving and show what eve will run."""

from __future__ import annotations

from typing import Annotated

import typer

from eve_cli.commands._info import show_info

__all__ = ["info"]


def info(
    as_json: Annotated[bool, typer.Option("--json", help="Print the agent-info document (version 6) as JSON.")] = False,
) -> None:
    """Show the agent: model, instructions, tools, skills, subagents, routes and diagnostics."""
    code = show_info(as_json)
    if code:
        raise typer.Exit(code)
