"""Diagnostics: what discovery and compilation found wrong, with stable codes.

Discovery and compilation never raise for a problem in the user's project; they report a
[`Diagnostic`][eve_runtime.diagnostics.Diagnostic] instead, so every problem is shown at once
and `eve info` can still describe the rest of the agent. Codes are stable: tools and tests
match on them, never on the message text.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Diagnostic",
    "DiagnosticsSummary",
    "Severity",
    "closest",
    "did_you_mean",
    "error",
    "has_errors",
    "summarize",
    "warning",
]

Severity = Literal["error", "warning"]


class Diagnostic(BaseModel):
    """One problem found in an agent's sources."""

    model_config = ConfigDict(frozen=True)

    code: str
    """Stable machine-readable code such as `discover/tool-name-invalid`."""
    severity: Severity
    message: str
    """What is wrong and how to fix it."""
    source_path: str = Field(serialization_alias="sourcePath")
    """Absolute path of the file or folder concerned."""
    line: int | None = None
    """1-based line in `source_path`, when known."""
    node_id: str = Field(default="__root__", serialization_alias="nodeId")
    """The agent the problem belongs to: `__root__`, or a subagent's node id."""

    def location(self) -> str:
        """`path:line` or just the path, for humans."""
        return f"{self.source_path}:{self.line}" if self.line is not None else self.source_path


class DiagnosticsSummary(BaseModel):
    """How many errors and warnings there are."""

    errors: int
    warnings: int


def error(
    code: str, message: str, path: Path | str, *, line: int | None = None, node_id: str = "__root__"
) -> Diagnostic:
    """Build an error diagnostic."""
    return Diagnostic(code=code, severity="error", message=message, source_path=str(path), line=line, node_id=node_id)


def warning(
    code: str, message: str, path: Path | str, *, line: int | None = None, node_id: str = "__root__"
) -> Diagnostic:
    """Build a warning diagnostic."""
    return Diagnostic(code=code, severity="warning", message=message, source_path=str(path), line=line, node_id=node_id)


def summarize(diagnostics: Iterable[Diagnostic]) -> DiagnosticsSummary:
    """Count errors and warnings."""
    errors = warnings = 0
    for diagnostic in diagnostics:
        if diagnostic.severity == "error":
            errors += 1
        else:
            warnings += 1
    return DiagnosticsSummary(errors=errors, warnings=warnings)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    """Whether any diagnostic is an error."""
    return any(d.severity == "error" for d in diagnostics)


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice `word` is most likely a misspelling of, or None when none is close."""
    options = [choice for choice in choices if choice != word]
    found = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    if not found:  # `Reasoning` for `reasoning`: difflib compares case-sensitively
        lowered = {choice.lower(): choice for choice in options}
        found = [lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=cutoff)]
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`did you mean 'x'?` for the closest of `choices`, or an empty string when none is close."""
    match = closest(word, choices, cutoff=cutoff)
    return f"did you mean {match!r}?" if match is not None else ""
