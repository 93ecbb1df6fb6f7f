"""Output helpers: rich consoles for people, plain stdout for data, and uniform errors.

rich is imported on first use: `eve --help` never prints through these consoles. typer too
(`fail` raises its `Exit`): `eve info` runs without it (`eve_cli.main`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn, cast

if TYPE_CHECKING:
    from rich.console import Console

    from eve_runtime.diagnostics import Diagnostic

__all__ = ["diagnostic_spans", "err", "escape", "fail", "out", "print_diagnostics"]


class _LazyConsole:
    """A rich `Console` made on first use."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def made(self) -> Console:
        """The console itself (made now if it was not yet)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)

    def __enter__(self) -> Console:  # rich's Live and Progress use their console as a context manager
        return self.made().__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        self.made().__exit__(*exc_info)


# emoji=False: a `:name:` in a path or an author's text is printed as it is (rich would draw an
# emoji, and load its 3,600 codes to do so); eve's own messages use none.
out = cast("Console", _LazyConsole(highlight=False, soft_wrap=True, emoji=False))
err = cast("Console", _LazyConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False))


def escape(text: str) -> str:
    """`rich.markup.escape`: `text` printed as it is, never read as markup."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print `error: message` on stderr and exit with `code` (1: a user error)."""
    import typer

    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def diagnostic_spans(diagnostic: Diagnostic) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A diagnostic's two lines as (text, style) runs: severity and location; message and code."""
    style = "red" if diagnostic.severity == "error" else "yellow"
    head = [(diagnostic.severity, style), (" " + diagnostic.location(), "")]
    return head, [(diagnostic.message, ""), (f" [{diagnostic.code}]", "dim")]


def print_diagnostics(diagnostics: Iterable[Diagnostic], console: Console) -> None:
    """Two lines per diagnostic (`diagnostic_spans`): severity and location, then message and code."""
    from rich.text import Text

    for diagnostic in diagnostics:
        head, body = diagnostic_spans(diagnostic)
        console.print(Text.assemble(*head, "\n  ", *body))  # Text, not markup: printed as it is
