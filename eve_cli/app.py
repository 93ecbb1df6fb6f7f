"""The `eve` command: a thin typer app over `eve_runtime`.

Commands import `eve_runtime` lazily, inside their functions, so loading the app stays cheap.
`eve_cli.main` (the console script) loads this module for every command but `eve --help`, whose
text `eve_cli._root_help` holds as this app prints it (`render_root_help`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from eve_cli.commands.build import build
from eve_cli.commands.connections import connections_app
from eve_cli.commands.dev import dev
from eve_cli.commands.eval import eval_command
from eve_cli.commands.info import info
from eve_cli.commands.init import init
from eve_cli.commands.schedules import schedules_app
from eve_cli.commands.send import send
from eve_cli.commands.sessions import sessions_app
from eve_cli.commands.start import start

__all__ = ["app", "render_root_help"]

app = typer.Typer(
    name="eve",
    help="eve: agents as directories, with durable sessions.",
    add_completion=False,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # plain help: rendering it with rich costs more than the rest of `eve --help`
)
app.command("init")(init)
app.command("info")(info)
app.command("build")(build)
app.command("dev")(dev)
app.command("start")(start)
app.command("send")(send)
app.command("eval")(eval_command)
app.add_typer(sessions_app, name="sessions")
app.add_typer(schedules_app, name="schedules")
app.add_typer(connections_app, name="connections")


def _version(value: bool) -> None:
    if value:
        from eve_runtime import __version__

        typer.echo(f"eve {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """eve: agents as directories, with durable sessions.

    Run bare `eve` outside an app to create one here; inside an app it shows this help.
    """
    if ctx.invoked_subcommand is not None:
        return
    from eve_runtime.errors import ProjectNotFoundError
    from eve_runtime.project.paths import find_app_root

    try:
        find_app_root()
    except ProjectNotFoundError:
        ctx.invoke(init, directory=None, model=None, template="default", non_interactive=False)
        return
    typer.echo(ctx.get_help())


def render_root_help() -> str:
    """`eve --help` as typer prints it on a terminal of 80 columns or more (its text is 78 wide then).

    `scripts/root_help.py` writes it into `eve_cli/_root_help.py`; a test holds the two equal.
    """
    import typer.main

    command = typer.main.get_command(app)
    with command.make_context("eve", [], terminal_width=78) as ctx:
        return ctx.get_help() + "\n"
