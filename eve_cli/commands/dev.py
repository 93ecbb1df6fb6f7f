"""`eve dev`: serve the app for local development (loopback requests only, no token needed)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from eve_cli._console import err
from eve_cli.commands.start import run_server

__all__ = ["dev"]


def dev(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, help="Port (default: $PORT, else 2000; 0 picks one).")
    ] = None,
    no_ui: Annotated[bool, typer.Option("--no-ui", help="Serve without the terminal UI.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Resume sessions of an earlier eve dev.")] = False,
) -> None:
    """Serve the agent for development: requests from this machine only, no token needed."""
    if not no_ui and sys.stdin.isatty():
        err.print("The terminal UI arrives in a later version of eve; serving without it.")
    # Until dormant sessions exist, every session of the store is resumed, so --resume changes nothing yet.
    del resume
    run_server(mode="development", host=host, port=port, default_port=2000, world="local", database_url=None)
