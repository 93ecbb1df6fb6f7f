"""The typer classes of eve's commands: typer's own, with a help option that costs nothing unused.

typer (0.29) coerces every parameter's value through a pydantic `TypeAdapter`, made on first
use, except a boolean flag whose value already is a bool. The `--help` option it adds to each
command has no default, so its value is None whenever `--help` is not given, and parsing any
command made that adapter: pydantic's schema machinery imported and run (about 40 ms of
`eve info`) for a flag nobody passed. Defaulting the option to False skips it; what `--help`
does and how the help reads stay as they are.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup

__all__ = ["EveCommand", "EveGroup"]


def _default_false(option: Any) -> Any:
    if option is not None and option.default is None:
        option.default = False
    return option


class EveCommand(TyperCommand):
    """A command whose unused `--help` is the bool False, not None."""

    def get_help_option(self, ctx: Any) -> Any:
        return _default_false(super().get_help_option(ctx))


class EveGroup(TyperGroup):
    """A command group whose unused `--help` is the bool False, not None."""

    def get_help_option(self, ctx: Any) -> Any:
        return _default_false(super().get_help_option(ctx))
