"""The `eve` console script: `eve --help` without loading typer, every other command through it.

`eve --help` (and `-h`) prints the root help that `eve_cli.app` renders, stored word for word in
`eve_cli._root_help`: importing typer and building the app's commands is most of its time, and
the text depends only on eve's code, typer's version and the width, which is fixed from 80
columns up. Anything else (another width, `python -m eve_cli`, any other arguments) runs the app.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing (and re) would be a third of this path
if TYPE_CHECKING:
    import typer

__all__ = ["main"]  # and `app`, through __getattr__

HELP_ARGUMENTS = (["--help"], ["-h"])
MIN_COLUMNS = 80
"""From this width on, typer's help is 78 characters wide whatever the terminal."""


def __getattr__(name: str) -> typer.Typer:
    """`eve_cli.main.app`: the typer app, loaded when asked for."""
    if name == "app":
        from eve_cli.app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def terminal_columns() -> int:
    """The width typer's help formatter sees: `shutil.get_terminal_size().columns`, without `shutil`."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or MIN_COLUMNS  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return MIN_COLUMNS  # shutil's fallback


def stored_root_help(argv: list[str]) -> str | None:
    """The root help when this run would print exactly the stored text, else None."""
    if argv[1:] not in HELP_ARGUMENTS or os.path.basename(argv[0]) != "eve":
        return None  # typer names the program after argv[0]
    if getattr(sys.modules.get("__main__"), "__package__", None):
        return None  # `python -m eve_cli`: typer says so in the usage line
    if terminal_columns() < MIN_COLUMNS:
        return None
    from eve_cli._root_help import ROOT_HELP

    return ROOT_HELP


def main() -> None:
    """Entry point of the `eve` console script."""
    text = stored_root_help(sys.argv)
    if text is not None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from eve_cli.app import app

    app()
