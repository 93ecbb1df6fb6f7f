"""`eve sessions list|show|stream`: the sessions of a running server, read through `eve_runtime.client`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from eve_cli._console import fail, out
from eve_cli.commands._server import TokenOption, UrlOption, connect, resolve_target

__all__ = ["sessions_app"]

sessions_app = typer.Typer(
    help="The sessions of a running eve server (the app's eve dev unless --url is given).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # plain help: rendering it with rich costs more than the rest of `eve --help`
)

SessionArgument = Annotated[str, typer.Argument(help="The session id (wrun_...).", show_default=False)]


@sessions_app.command("list")
def list_sessions(
    url: UrlOption = None,
    token: TokenOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sessions as JSON.")] = False,
) -> None:
    """List the sessions of the eve dev server, newest first."""
    from eve_runtime.client import ResponseError

    target = resolve_target(url, token)
    with connect(target) as eve:
        try:
            sessions = eve.sessions()
        except ResponseError as exc:
            if exc.status != 404:
                raise
            fail(f"{target.url} does not list sessions: only eve dev serves them (GET /eve/v1/dev/sessions).")
    if as_json:
        typer.echo(json.dumps(sessions, indent=2))
    else:
        from eve_cli._session_view import render_session_list  # rich, only when printing

        render_session_list(sessions, out)


@sessions_app.command("show")
def show(session_id: SessionArgument, url: UrlOption = None, token: TokenOption = None) -> None:
    """Show a session's conversation: messages, tool calls and results, open requests, tasks and usage."""
    from eve_runtime.client import Conversation

    with connect(resolve_target(url, token)) as eve:
        conversation = Conversation.from_events(eve.stream(session_id, follow=False))
    from eve_cli._session_view import render_conversation  # rich, only when printing

    render_conversation(session_id, conversation, out)


@sessions_app.command("stream")
def stream(
    session_id: SessionArgument,
    follow: Annotated[
        bool, typer.Option("--follow/--no-follow", help="Keep printing new events until the session ends.")
    ] = True,
    start_index: Annotated[
        int, typer.Option("--start-index", help="Events to skip (negative: count back from the newest).")
    ] = 0,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Print a session's events as NDJSON, one per line (resumed after a dropped connection)."""
    with connect(resolve_target(url, token)) as eve:
        try:
            for event in eve.stream(session_id, start_index, follow):
                typer.echo(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
