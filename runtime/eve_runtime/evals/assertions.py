"""Assertion results with their severity, and the verdict of one eval.

Every assertion records an [`Assertion`][eve_runtime.evals.assertions.Assertion] with a score
from 0 to 1 and returns it, so severity rides on it: `.gate(threshold?)` (a miss fails the eval),
`.soft(threshold?)` (a miss below the threshold marks it `scored`; without one it is only
tracked), `.at_least(threshold)` (soft with a bar). An assertion that could not be evaluated at
all (a judge whose model failed) is an error: it fails the eval whatever its severity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Assertion", "EvalStatus", "Severity", "value_matches", "verdict"]

Severity = Literal["gate", "soft"]
EvalStatus = Literal["passed", "failed", "scored", "skipped", "error"]


@dataclass
class Assertion:
    """One recorded assertion: what it checked, its score, and how much a miss matters."""

    name: str
    score: float
    message: str
    severity: Severity = "gate"
    threshold: float | None = None
    error: str | None = None
    """Why it could not be evaluated (it then fails the eval, whatever its severity)."""
    scope: str = "run"
    details: dict[str, Any] = field(default_factory=dict)

    def gate(self, threshold: float | None = None) -> Assertion:
        """A miss fails the eval (`eve eval` exits 1); the bar is `threshold`, else 1."""
        self.severity, self.threshold = "gate", _bar(threshold)
        return self

    def soft(self, threshold: float | None = None) -> Assertion:
        """Tracked: below `threshold` marks the eval `scored` (fatal only under `--strict`); none, never fails."""
        self.severity, self.threshold = "soft", _bar(threshold)
        return self

    def at_least(self, threshold: float) -> Assertion:
        """Soft with a bar: the same as `.soft(threshold)`."""
        return self.soft(threshold)

    def label(self, name: str) -> Assertion:
        """Rename it in the reports."""
        self.name = name
        return self

    @property
    def passed(self) -> bool:
        """Whether it met its bar (a soft assertion without a threshold always does, unless it errored)."""
        if self.error is not None:
            return False
        if self.severity == "soft" and self.threshold is None:
            return True
        return self.score >= (self.threshold if self.threshold is not None else 1.0)

    def to_json(self) -> dict[str, Any]:
        """The assertion as the artifacts store it."""
        return {
            "name": self.name,
            "scope": self.scope,
            "severity": self.severity,
            "threshold": self.threshold,
            "score": self.score,
            "passed": self.passed,
            "message": self.message,
            **({"error": self.error} if self.error is not None else {}),
            **({"details": self.details} if self.details else {}),
        }


def _bar(threshold: float | None) -> float | None:
    if threshold is not None and not 0 <= threshold <= 1:
        raise ValueError(f"a threshold is between 0 and 1 (got {threshold!r})")
    return threshold


def verdict(assertions: Iterable[Assertion], *, error: str | None = None, skipped: bool = False) -> EvalStatus:
    """How an eval ended: skipped, error, failed, scored or passed.

    `error`: the test raised; `failed`: a gate missed, an assertion errored, or nothing was
    asserted; `scored`: only soft bars missed.
    """
    if skipped:
        return "skipped"
    if error is not None:
        return "error"
    listed = list(assertions)
    if not listed or any(not item.passed and (item.severity == "gate" or item.error) for item in listed):
        return "failed"
    if any(not item.passed for item in listed):
        return "scored"
    return "passed"


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether `actual` matches `expected` (eve's matcher mini-language).

    Objects match partially and deeply, a compiled regex searches the value's text, a function
    decides (or returns the value expected), anything else is compared for equality.
    """
    if isinstance(expected, re.Pattern):
        return actual is not None and expected.search(actual if isinstance(actual, str) else _text(actual)) is not None
    if callable(expected) and not isinstance(expected, type):
        decided = expected(actual)
        return decided if isinstance(decided, bool) else value_matches(decided, actual)
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and value_matches(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(value_matches(e, a) for e, a in zip(expected, actual, strict=True))
    return bool(expected == actual)


def _text(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


Recorder = Callable[[Assertion], Assertion]
"""Where a scope records its assertions (the eval's list)."""
