"""Output helpers: rich consoles for people, plain stdout for data, and uniform errors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from eve_runtime.diagnostics import Diagnostic

__all__ = ["err", "fail", "out", "print_diagnostics"]

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print `error: message` on stderr and exit with `code` (1: a user error)."""
    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def print_diagnostics(diagnostics: Iterable[Diagnostic], console: Console) -> None:
    """One line per diagnostic: severity, location, message and code."""
    for diagnostic in diagnostics:
        style = "red" if diagnostic.severity == "error" else "yellow"
        console.print(
            f"[{style}]{diagnostic.severity}[/] {escape(diagnostic.location())}\n"
            f"  {escape(diagnostic.message)} [dim]\\[{diagnostic.code}][/]"
        )
