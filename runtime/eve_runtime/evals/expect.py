"""Value assertions for `t.check(value, builder)`: `includes`, `equals`, `matches`, `similarity`, `satisfies`.

`includes`, `equals`, `matches` and `satisfies` are gates; `similarity` (normalized Levenshtein,
1 = identical) is soft. Change either with the returned assertion's `.gate()`/`.soft()`/`.at_least()`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from eve_runtime.evals.assertions import Severity

__all__ = ["Check", "equals", "includes", "matches", "satisfies", "similarity"]


@dataclass(frozen=True)
class Check:
    """What `t.check` applies to a value: a scorer and its default severity."""

    name: str
    score: Callable[[Any], tuple[float, str]]
    severity: Severity = "gate"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def includes(expected: str | re.Pattern[str]) -> Check:
    """The value (as text) contains `expected`, or matches it when it is a compiled regex (gate)."""

    def score(value: Any) -> tuple[float, str]:
        text = _text(value)
        found = expected.search(text) is not None if isinstance(expected, re.Pattern) else expected in text
        shown = expected.pattern if isinstance(expected, re.Pattern) else expected
        return (1.0, f"includes {shown!r}") if found else (0.0, f"{text[:200]!r} does not include {shown!r}")

    return Check("includes", score)


def equals(expected: Any) -> Check:
    """The value equals `expected` (deep structural equality, gate)."""

    def score(value: Any) -> tuple[float, str]:
        if value == expected:
            return 1.0, "equal"
        return 0.0, f"{_text(value)[:200]} != {_text(expected)[:200]}"

    return Check("equals", score)


def matches(schema: Mapping[str, Any] | type) -> Check:
    """The value validates against a JSON Schema, or a pydantic model class (gate)."""

    def score(value: Any) -> tuple[float, str]:
        if isinstance(schema, type):
            validate = getattr(schema, "model_validate", None)
            if validate is None:
                raise TypeError("matches() takes a JSON Schema (a dict) or a pydantic model class")
            try:
                validate(value)
            except ValueError as exc:
                return 0.0, f"does not validate as {schema.__name__}: {exc}"
            return 1.0, f"validates as {schema.__name__}"
        errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda error: list(error.path))
        if errors:
            return 0.0, f"does not match the schema: {errors[0].message}"
        return 1.0, "matches the schema"

    return Check("matches", score)


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, 1):
        current = [i]
        for j, right in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right)))
        previous = current
    return previous[-1]


def similarity(expected: str) -> Check:
    """How close the value's text is to `expected`: 1 - edit distance / longer length (soft)."""

    def score(value: Any) -> tuple[float, str]:
        text = _text(value)
        longest = max(len(text), len(expected))
        result = 1.0 if longest == 0 else 1 - _levenshtein(text, expected) / longest
        return result, f"similarity {result:.2f} to {expected[:80]!r}"

    return Check("similarity", score, severity="soft")


def satisfies(predicate: Callable[[Any], bool], label: str) -> Check:
    """`predicate(value)` is true (gate); `label` says what it checks."""

    def score(value: Any) -> tuple[float, str]:
        return (1.0, label) if predicate(value) else (0.0, f"not {label}")

    return Check(f"satisfies: {label}", score)
