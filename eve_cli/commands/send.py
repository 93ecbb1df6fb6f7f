"""`eve send "message"`: one turn against a running server, its reply on stdout.

Exit codes: 0 the turn completed, 3 it waits for a person (the open requests and how to answer
are printed), 1 it failed or was cancelled (or the server could not be used).
"""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Annotated

import typer

from eve_cli._console import err, escape, out
from eve_cli.commands._server import TokenOption, UrlOption, connect, resolve_target

if TYPE_CHECKING:
    from eve_runtime.client import TurnResult

__all__ = ["WAITING_FOR_INPUT", "send"]

WAITING_FOR_INPUT = 3
"""The exit code of a turn that waits for a person (an approval, a question)."""


def _report(result: TurnResult) -> None:
    if result.reply is not None:
        typer.echo(result.reply)
    elif result.data is not None:
        typer.echo(json.dumps(result.data, ensure_ascii=False))
    if result.status == "completed":
        return
    if result.status == "waiting-for-input":
        out.print("The turn is waiting for an answer:")
        from eve_cli._session_view import render_pending  # rich, only when printing

        render_pending(result.pending, out)
        options = result.pending[0].option_ids if result.pending else []
        example = options[0] if options else "your answer"
        out.print(
            f"Answer with: eve send --session {result.session_id} {shlex.quote(example)}"
            "  (an option id, its label or number)"
        )
        raise typer.Exit(WAITING_FOR_INPUT)
    if result.status == "cancelled":
        err.print("[yellow]The turn was cancelled.[/]")
    elif result.error is not None:
        err.print(f"[bold red]error:[/] the turn failed: {escape(result.error.code)}: {escape(result.error.message)}")
    else:
        err.print("[bold red]error:[/] the turn failed.")
    raise typer.Exit(1)


def send(
    message: Annotated[str, typer.Argument(help="The message (test model directives such as /call work too).")],
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Continue this session (default: start a new one).", show_default=False),
    ] = None,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Send one message and print the reply (exit 0: done, 3: waiting for an answer, 1: failed)."""
    with connect(resolve_target(url, token)) as eve:
        if session is None:
            session_id = eve.create(message)
            err.print(f"[dim]session {session_id}[/]")
            result = eve.result(session_id)
        else:
            from eve_runtime.client import Conversation

            start = eve.event_count(session)
            answering = bool(Conversation.from_events(eve.stream(session, follow=False)).pending)
            delivery_id = eve.send(session, message)
            # An answer resumes the waiting turn, whose events do not carry the answer's delivery id.
            result = eve.result(session, start, delivery_id=None if answering else delivery_id)
    _report(result)
