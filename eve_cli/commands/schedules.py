"""`eve schedules run NAME`: fire one schedule now, by hand.

Through the app's running `eve dev` (or the server at `--url`) when there is one: its dev route
`POST /eve/v1/dev/schedules/NAME` fires it and the command prints the sessions it reached. Without
a server it fires in this process on the local world and waits for each session's turn, printing
its answer. The session ids go to stdout, one per line; everything else to stderr.
"""

from __future__ import annotations

from typing import Annotated

import typer

from eve_cli._console import err, escape, fail
from eve_cli.commands._server import TokenOption, UrlOption, connect, resolve_target
from eve_cli.commands.start import app_root_or_fail

__all__ = ["schedules_app"]

schedules_app = typer.Typer(
    help="The app's schedules (agent/schedules/): fire one by hand.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # plain help: rendering it with rich costs more than the rest of `eve --help`
)

NameArgument = Annotated[str, typer.Argument(help="The schedule's name: its path under agent/schedules/, no suffix.")]


@schedules_app.command("run")
def run(name: NameArgument, url: UrlOption = None, token: TokenOption = None) -> None:
    """Fire a schedule once now (through the running eve dev, else in this process); print its sessions."""
    if url is None:
        from eve_runtime.serving.dev_server import running_server

        if running_server(app_root_or_fail()) is None:
            _fire_here(name)
            return
    _fire_through_server(name, url, token)


def _fire_through_server(name: str, url: str | None, token: str | None) -> None:
    from eve_runtime.client import ResponseError

    target = resolve_target(url, token)
    with connect(target) as eve:
        try:
            session_ids = eve.fire_schedule(name)
        except ResponseError as exc:
            if exc.code == "schedule_not_found":
                fail(exc.message)
            if exc.status == 404:
                fail(
                    f"{target.url} does not fire schedules by hand: only eve dev serves "
                    "POST /eve/v1/dev/schedules/NAME (eve start fires them on their cron cadence)."
                )
            raise
    err.print(f"Fired [bold]{escape(name)}[/] through {escape(target.url)}.")
    _print_sessions(session_ids)


def _fire_here(name: str) -> None:
    from eve_runtime.errors import EveError
    from eve_runtime.serving.fire import fire_schedule

    err.print(f"[dim]No eve dev runs for this app: firing {escape(name)} here, on the local world.[/]")
    try:
        fired = fire_schedule(app_root_or_fail(), name)
    except EveError as exc:  # no such schedule, its handler failed, the store is in use, ...
        fail(str(exc))
    for session in fired:
        if session.error is not None:
            err.print(f"[red]{escape(session.session_id)} failed:[/] {escape(session.error)}")
        elif not session.ended:
            err.print(f"[yellow]{escape(session.session_id)} has not finished its turn (the next server goes on).[/]")
        elif session.reply is not None:
            err.print(f"[dim]{escape(session.session_id)}:[/] {escape(session.reply)}")
    _print_sessions([session.session_id for session in fired], hint=False)
    if any(session.error is not None for session in fired):
        raise typer.Exit(1)


def _print_sessions(session_ids: list[str], *, hint: bool = True) -> None:
    if not session_ids:
        err.print("[dim]The fire reached no session.[/]")
    for session_id in session_ids:
        typer.echo(session_id)
    if session_ids and hint:
        err.print(f"[dim]See one with: eve sessions show {escape(session_ids[0])}[/]")
