"""`eve start`: serve the app in production mode (bearer-token auth, the local or Postgres world)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Literal

import typer

from eve_cli._console import err, fail, print_diagnostics

__all__ = ["app_root_or_fail", "run_server", "start"]

Mode = Literal["development", "production"]
WORLDS = ("local", "postgres")


def _configure_logging(log_file: Path | None = None) -> None:
    """Logs on stderr (stdout carries only the listening line), or in `log_file` under a terminal UI.

    eve logs at INFO, libraries at WARNING.
    """
    line = "%(levelname)s %(name)s: %(message)s"
    if log_file is None:
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=line)
    else:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        logging.basicConfig(level=logging.WARNING, filename=log_file, format="%(asctime)s " + line, force=True)
    for name in ("eve", "eve_runtime"):
        logging.getLogger(name).setLevel(logging.INFO)
    from eve_runtime.redaction import install_log_redaction

    install_log_redaction()  # secrets never reach the log (eve_runtime.redaction)


def _port(given: int | None, default: int) -> int:
    if given is not None:
        return given
    raw = os.environ.get("PORT", "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) > 65535:
        raise typer.BadParameter(f"PORT={raw!r} is not a port number (0-65535).", param_hint="'--port' / $PORT")
    return int(raw)


def _world(given: str | None) -> str:
    world = given if given is not None else (os.environ.get("EVE_WORLD", "").strip() or "local")
    if world not in WORLDS:
        source = "--world" if given is not None else "$EVE_WORLD"
        raise typer.BadParameter(f"{world!r} is not a world: choose local or postgres.", param_hint=source)
    return world


def app_root_or_fail() -> Path:
    """The app around the current directory (its `.env` files loaded), or a clear exit 1."""
    from eve_runtime.errors import ProjectNotFoundError
    from eve_runtime.project.paths import find_app_root, load_env_files

    try:
        app_root: Path = find_app_root()
    except ProjectNotFoundError as exc:
        fail(str(exc))
    load_env_files(app_root)  # so PORT, EVE_WORLD and EVE_DATABASE_URL may come from .env too
    return app_root


def run_server(
    *,
    mode: Mode,
    host: str,
    port: int | None,
    default_port: int,
    world: str | None,
    database_url: str | None,
    reload: bool = False,
    resume: bool = True,
    on_listening: Callable[[Path, str], None] | None = None,
    companion: Callable[[str], Awaitable[None]] | None = None,
    log_file: Path | None = None,
    inspector: bool = False,
    trace: bool = False,
) -> None:
    """Find the app, load its .env files, resolve the defaults and serve until stopped (shared with `eve dev`)."""
    from eve_runtime.errors import CompileError
    from eve_runtime.serving.serve import ServeError, serve

    app_root = app_root_or_fail()
    resolved_port = _port(port, default_port)
    resolved_world = _world(world)
    url = database_url if database_url is not None else (os.environ.get("EVE_DATABASE_URL") or None)
    _configure_logging(log_file)

    def listening(line: str) -> None:
        if on_listening is not None:
            on_listening(app_root, line)  # before the line: whoever reads it may rely on what this did
        sys.stdout.write(line + "\n")
        if inspector or mode == "development":
            sys.stdout.write(f"eve inspector at {line.removeprefix('eve listening on ').strip()}/\n")
        sys.stdout.flush()

    try:
        serve(
            app_root,
            mode=mode,
            host=host,
            port=resolved_port,
            world=resolved_world,
            database_url=url,
            reload=reload,
            resume=resume,
            on_listening=listening,
            companion=companion,
            inspector=inspector,
            trace=trace,
        )
    except CompileError as exc:
        print_diagnostics(exc.diagnostics, err)
        fail("The agent has errors, so it cannot be served. Fix them (see 'eve info') and start again.")
    except ServeError as exc:
        fail(str(exc))


def start(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, help="Port (default: $PORT, else 3000; 0 picks one).")
    ] = None,
    world: Annotated[
        str | None,
        typer.Option("--world", help="Where sessions live: local or postgres (default: $EVE_WORLD, else local)."),
    ] = None,
    database_url: Annotated[
        str | None, typer.Option("--database-url", help="Postgres connection string (default: $EVE_DATABASE_URL).")
    ] = None,
    inspector: Annotated[
        bool, typer.Option("--inspector", help="Also serve the web inspector at / (its data calls need the token).")
    ] = False,
) -> None:
    """Serve the agent in production: every route but health needs Authorization: Bearer $EVE_AUTH_TOKEN."""
    run_server(
        mode="production",
        host=host,
        port=port,
        default_port=3000,
        world=world,
        database_url=database_url,
        inspector=inspector,
    )
