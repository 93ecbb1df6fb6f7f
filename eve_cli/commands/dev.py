"""`eve dev`: serve the app for local development (loopback only, no token), reloading on every save.

In a terminal (stdin and stdout are TTYs) and without `--no-ui`, the terminal UI runs beside the
server and the server's logs go to `.eve/logs/dev-<time>-<pid>.log`; quitting the UI stops the
server. A second `eve dev` for the same app attaches its UI to the running server instead of
starting another one (without a terminal it prints where that server is).

On an agent with errors it does not exit: it serves their diagnostics (health says so, messages
get a 409 `agent_has_errors`) and serves the first save that compiles
(`eve_runtime.serving.broken`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from eve_cli._console import fail, out
from eve_cli.commands.start import app_root_or_fail, run_server

__all__ = ["dev"]


def _recorder(log_file: Path | None) -> Callable[[Path, str], None]:
    def record(app_root: Path, line: str) -> None:
        from eve_runtime.serving.dev_server import write_record

        write_record(app_root, line.removeprefix("eve listening on ").strip(), log_file=log_file)

    return record


def _log_file(app_root: Path) -> Path:
    import os

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return app_root / ".eve" / "logs" / f"dev-{stamp}-{os.getpid()}.log"


def _attach(app_root: Path, url: str, pid: int, log_file: str | None) -> None:
    import asyncio

    from eve_cli.tui import chat

    logs = Path(log_file) if log_file else None
    asyncio.run(chat(url, app_root=app_root, log_file=logs, attached_to=pid))


def dev(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, help="Port (default: $PORT, else 2000; 0 picks one).")
    ] = None,
    no_ui: Annotated[bool, typer.Option("--no-ui", help="Serve and log without the terminal UI.")] = False,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Run the unfinished sessions of an earlier eve dev (else they stay dormant)."),
    ] = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="Print a compact trace of each turn: its spans, durations and tokens.")
    ] = False,
) -> None:
    """Serve the agent for development with a terminal UI: requests from this machine only, reloaded on every save."""
    from eve_cli.user_config import apply_provider_keys
    from eve_runtime.serving.dev_server import clear_record, running_server

    app_root = app_root_or_fail()
    with_ui = not no_ui and sys.stdin.isatty() and sys.stdout.isatty()
    running = running_server(app_root)
    if running is not None:
        if resume:
            fail(
                f"eve dev is already running for this app ({running.url}, pid {running.pid}): --resume only applies "
                "when eve dev starts the server. Stop that one (/quit or Ctrl-C there) and start again."
            )
        if with_ui:
            _attach(app_root, running.url, running.pid, running.log_file)
            return
        out.print(f"eve dev is already running for this app: {running.url} (pid {running.pid}).")
        out.print("Talk to it there; stop it (Ctrl-C in its terminal) to start another.")
        return
    apply_provider_keys()  # keys saved by /model; the environment and the app's .env win
    log_file = _log_file(app_root) if with_ui else None
    companion = None
    if with_ui:
        from eve_cli.tui import chat

        async def companion(url: str) -> None:
            await chat(url, app_root=app_root, log_file=log_file, resume=resume, trace=trace)

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
            on_listening=_recorder(log_file),
            companion=companion,
            log_file=log_file,
            trace=trace,
        )
    finally:
        clear_record(app_root)
