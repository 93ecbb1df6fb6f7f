"""`eve dev`: serve the app for local development (loopback only, no token), reloading on every save."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from eve_cli._console import err, out
from eve_cli.commands.start import app_root_or_fail, run_server

__all__ = ["dev"]


def _record(app_root: Path, line: str) -> None:
    from eve_runtime.dev_server import write_record

    write_record(app_root, line.removeprefix("eve listening on ").strip())


def dev(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, help="Port (default: $PORT, else 2000; 0 picks one).")
    ] = None,
    no_ui: Annotated[bool, typer.Option("--no-ui", help="Serve without the terminal UI.")] = False,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Run the unfinished sessions of an earlier eve dev (else they stay dormant)."),
    ] = False,
) -> None:
    """Serve the agent for development: requests from this machine only, no token, reloaded on every save."""
    from eve_runtime.dev_server import clear_record, running_server

    app_root = app_root_or_fail()
    running = running_server(app_root)
    if running is not None:
        out.print(f"eve dev is already running for this app: {running.url} (pid {running.pid}).")
        out.print("Talk to it there; stop it (Ctrl-C in its terminal) to start another.")
        return
    if not no_ui and sys.stdin.isatty():
        err.print("The terminal UI arrives in a later version of eve; serving without it.")
    try:
        run_server(
            mode="development",
            host=host,
            port=port,
            default_port=2000,
            world="local",
            database_url=None,
            reload=True,
            resume=resume,
            on_listening=_record,
        )
    finally:
        clear_record(app_root)
