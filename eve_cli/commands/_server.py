"""Shared by the commands that talk to a running server: which server, and errors as plain messages.

Without `--url` they talk to the app's running `eve dev`, found through the record it keeps in
`.eve/dev-server-state.v1.json`. `eve_runtime.client` (and httpx) are imported only when a
command runs, so `eve --help` stays fast.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from eve_cli._console import fail

if TYPE_CHECKING:
    from eve_runtime.client import EveClient

__all__ = ["Target", "TokenOption", "UrlOption", "connect", "resolve_target"]

UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="The eve server, e.g. http://127.0.0.1:3000 (default: the app's eve dev)."),
]
TokenOption = Annotated[
    str | None,
    typer.Option("--token", help="Bearer token for eve start (default: $EVE_AUTH_TOKEN).", show_default=False),
]


@dataclass(frozen=True)
class Target:
    """The server a command talks to."""

    url: str
    token: str | None
    recorded: bool
    """Found through the app's eve dev record (not given with --url)."""


def resolve_target(url: str | None, token: str | None) -> Target:
    """The server: `--url` (with `--token` or $EVE_AUTH_TOKEN), else the app's running `eve dev`."""
    from eve_runtime.errors import ProjectNotFoundError
    from eve_runtime.project.paths import find_app_root, load_env_files
    from eve_runtime.serving.dev_server import STATE_FILE, read_record

    try:
        app_root = find_app_root()
    except ProjectNotFoundError:
        app_root = None
    if app_root is not None:
        load_env_files(app_root)
    if url is not None:
        if not url.startswith(("http://", "https://")):
            fail(f"--url takes an http:// or https:// URL, such as http://127.0.0.1:3000 (got {url!r}).")
        return Target(url.rstrip("/"), token or os.environ.get("EVE_AUTH_TOKEN") or None, recorded=False)
    if app_root is None:
        fail(
            "No eve app here (no 'agent/' folder in this folder or above), so no eve dev server to talk to: "
            "run this in your app while `eve dev` runs there, or pass --url URL."
        )
    record = read_record(app_root)
    if record is None:
        fail(
            f"No eve dev server is running for the app in {app_root} (no {STATE_FILE}): "
            "start one with `eve dev` in another terminal, or pass --url URL."
        )
    return Target(record.url, token, recorded=True)


def _unreachable(target: Target) -> str:
    if target.recorded:
        return (
            f"The eve dev server of this app ({target.url}) does not answer: it is no longer running. "
            "Start it again with `eve dev`."
        )
    return f"Cannot reach an eve server at {target.url}: check the URL and that the server is running."


@contextmanager
def connect(target: Target) -> Iterator[EveClient]:
    """A client of the target; client errors end the command with a message (exit 1), never a traceback."""
    from eve_runtime.client import ClientError, EveClient, ResponseError, ServerUnreachable

    try:
        with EveClient(target.url, token=target.token) as client:
            yield client
    except ServerUnreachable:
        fail(_unreachable(target))
    except ResponseError as exc:
        hint = ""
        if exc.status == 401:
            hint = " Pass --token TOKEN or set EVE_AUTH_TOKEN to the server's token."
        elif exc.code in ("session_not_active", "not_found") or exc.status == 404:
            hint = " Check the session id (`eve sessions list` shows the sessions of eve dev)."
        fail(f"{exc.message}{f' [{exc.code}]' if exc.code else ''}{hint}")
    except ClientError as exc:
        fail(str(exc))
