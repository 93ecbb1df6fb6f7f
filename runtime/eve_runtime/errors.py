"""The exceptions eve raises.

```
EveError                      base of everything below
├── UserError                 the user's project or input is wrong; the message names the file and the fix
│   ├── ProjectNotFoundError  no `agent/` folder from the working directory upwards
│   ├── DefinitionError       a `define_*` call or `@tool` got invalid arguments
│   └── CompileError          the project compiled with error diagnostics
└── RuntimeFailure            something failed while running a correct project
    └── ModelError            a model call failed (see `eve_runtime.models`)
```
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from eve_runtime.diagnostics import Diagnostic

__all__ = [
    "CompileError",
    "DefinitionError",
    "DefinitionProblem",
    "EveError",
    "ProjectNotFoundError",
    "RuntimeFailure",
    "UserError",
]


class EveError(Exception):
    """Base class of every error eve raises on purpose."""


class UserError(EveError):
    """A mistake in the user's project, configuration or input.

    The message says what is wrong, where (a file, a field or a value) and how to fix it.
    """


class ProjectNotFoundError(UserError):
    """No eve app was found from a directory upwards."""

    def __init__(self, start: Path) -> None:
        self.start = start
        super().__init__(
            f"No eve app found in {str(start)!r} or any folder above it: an eve app is a folder that holds "
            "an 'agent/' folder. Run 'eve init' to create one."
        )


class DefinitionProblem(NamedTuple):
    """One invalid argument of a `define_*` call."""

    field: str | None
    """The field, dotted for nested ones (`limits.session_timeout_ms`), when known."""
    message: str
    """What is wrong with it, naming the definer and the field."""


class DefinitionError(UserError):
    """A `define_*` function, `@tool` or `disable_tool` received invalid arguments.

    Attributes:
        field: The first offending field, dotted for nested ones (`limits.session_timeout_ms`), when known.
        problems: Every problem found, the first one first (one entry unless the definer checks them all).
    """

    def __init__(self, message: str, *, field: str | None = None, problems: Sequence[DefinitionProblem] = ()) -> None:
        self.field = field
        self.problems: tuple[DefinitionProblem, ...] = tuple(problems) or (DefinitionProblem(field, message),)
        super().__init__(message)

    @classmethod
    def of(cls, problems: Sequence[DefinitionProblem]) -> DefinitionError:
        """One error holding several problems; its message lists them all, one a line."""
        message = "\n".join(problem.message for problem in problems)
        return cls(message, field=problems[0].field, problems=problems)


class CompileError(UserError):
    """The project has error diagnostics, so it cannot run."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        lines = [f"{d.source_path}: {d.message} [{d.code}]" for d in errors]
        super().__init__(f"The agent has {len(errors)} error(s):\n" + "\n".join(lines))


class RuntimeFailure(EveError):
    """A failure while running a correct project (a model call, a store operation, ...)."""
