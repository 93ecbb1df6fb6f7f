"""The `eve` console script: `eve --help` and `eve info` without loading typer, the rest through it.

Importing typer and building the app's commands is most of `eve --help`'s time and a tenth of
`eve info`'s. So `eve --help` (and `-h`) prints the root help that `eve_cli.app` renders, stored
word for word in `eve_cli._root_help` (the text depends only on eve's code, typer's version and
the width, which is fixed from 80 columns up), and `eve info [--json]` calls the command's body
(`eve_cli.commands._info`) itself, ending as click would on a user error, Ctrl-C or a closed
stdout (an unexpected exception prints Python's traceback, not typer's rich one). Anything else
(other arguments, another width for the help, `python -m eve_cli` for the help) runs the app.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing (and re) would be a third of this path
if TYPE_CHECKING:
    import typer

__all__ = ["main"]  # and `app`, through __getattr__

HELP_ARGUMENTS = (["--help"], ["-h"])
INFO_ARGUMENTS = {("info",): False, ("info", "--json"): True}
"""`eve info`'s arguments that need no parsing, and whether each asks for JSON."""
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


def reader_gone() -> int:
    """Stdout's reader went away (`| head`): exit 1 quietly, as click does (the flush at exit too)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


PLUGINS_ALL_OFF = ("__all__", "1", "true")
"""The values of `PYDANTIC_DISABLE_PLUGINS` with which pydantic loads no plugin at all."""
PLUGIN_LOADER = "pydantic.plugin._loader"


def plugins_off() -> None:
    """Stand in for pydantic's plugin loader, which would find no plugin: `get_plugins()` is empty.

    The loader imports `importlib.metadata` (and with it `email`, `zipfile` and `csv`: about 6 ms)
    only to read the entry points that `PYDANTIC_DISABLE_PLUGINS` turns off anyway; pydantic asks
    it for plugins (`from ._loader import get_plugins`) each time it builds a model's validator.
    """
    if PLUGIN_LOADER in sys.modules:
        return
    from types import ModuleType

    loader = ModuleType(PLUGIN_LOADER, "No pydantic plugins: `eve info` turned them all off.")
    loader.get_plugins = tuple  # type: ignore[attr-defined]
    sys.modules[PLUGIN_LOADER] = loader


def run_info(as_json: bool) -> int:
    """`eve info`, as the app's `info` command runs it; the exit code.

    The cycle collector is off: the process ends as soon as it has printed, and the collections
    its imports would set off (about 90, over objects that all live until exit) cost more than the
    few cycles they would free.

    pydantic's plugins are off (`PYDANTIC_DISABLE_PLUGINS`, unless set already): looking for them
    reads the metadata of every installed distribution, and compiling validates nothing that a
    plugin (observability of validation calls) would have to see. With all of them off, pydantic's
    plugin loader is not imported either (`plugins_off`).
    """
    import gc

    gc.disable()
    if os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__") in PLUGINS_ALL_OFF:
        plugins_off()
    from eve_cli.commands._info import show_info

    try:
        return show_info(as_json)
    except BrokenPipeError:
        return reader_gone()
    except (KeyboardInterrupt, EOFError):  # Ctrl-C: click's "Aborted!" and exit 1
        sys.stderr.write("\nAborted!\n")
        return 1
    except Exception as exc:
        import typer  # loaded already if `eve_cli._console.fail` raised its Exit

        if isinstance(exc, typer.Exit):
            return exc.exit_code
        raise


def main() -> None:
    """Entry point of the `eve` console script."""
    text = stored_root_help(sys.argv)
    if text is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            sys.exit(reader_gone())
        return
    as_json = INFO_ARGUMENTS.get(tuple(sys.argv[1:]))
    if as_json is not None:
        sys.exit(run_info(as_json))
    from eve_cli.app import app

    app()
