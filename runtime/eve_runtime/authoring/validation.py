"""Turn pydantic validation errors into eve's `DefinitionError`s that name each bad field."""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from eve_runtime.diagnostics import did_you_mean
from eve_runtime.errors import DefinitionError, DefinitionProblem

__all__ = ["Problems", "field_path", "validated"]

T = TypeVar("T")

_UNION_TAGS = {"int", "bool", "float", "str", "dict", "list", "none"}


def field_path(location: tuple[int | str, ...]) -> str:
    """`("limits", "session_timeout_ms")` -> `limits.session_timeout_ms`, without pydantic's union-member tags."""
    parts: list[str] = []
    for item in location:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif _is_union_tag(item):
            continue  # a union member such as `constrained-int` or `literal[False]`, not a user field
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


class Problems:
    """A definer's problems, collected so that one call reports them all (`raise_any()` at the end)."""

    def __init__(self) -> None:
        self.found: list[DefinitionProblem] = []

    def add(self, field: str | None, message: str) -> None:
        """Record that `field` is invalid; `message` names the definer and the field."""
        self.found.append(DefinitionProblem(field, message))

    def when(self, failed: bool, field: str | None, message: str) -> None:
        """Record the problem if `failed` (a check written as one expression, whatever the annotations promise)."""
        if failed:
            self.add(field, message)

    def raise_any(self) -> None:
        """Raise one `DefinitionError` holding every problem recorded, if any was."""
        if self.found:
            raise DefinitionError.of(self.found)


def _is_union_tag(item: str) -> bool:
    return any(mark in item for mark in "-[(") or item in _UNION_TAGS


def validated(
    definer: str,
    build: Callable[[], T],
    *,
    model: type[BaseModel] | None = None,
    earlier: Sequence[DefinitionProblem] = (),
) -> T:
    """Run a pydantic constructor; re-raise its errors as one `DefinitionError` with a problem per bad field.

    `model` (the class `build` validates) lets an unknown field name its closest known one;
    `earlier` holds problems the definer found before validating, reported first.
    """
    try:
        result = build()
    except ValidationError as exc:
        raise DefinitionError.of([*earlier, *_problems(definer, exc, model)]) from None
    if earlier:
        raise DefinitionError.of(earlier)
    return result


def _problems(definer: str, exc: ValidationError, model: type[BaseModel] | None) -> list[DefinitionProblem]:
    by_field: dict[str, list[Any]] = {}
    for error in exc.errors():
        by_field.setdefault(field_path(tuple(error["loc"])), []).append(error)
    problems: list[DefinitionProblem] = []
    for field, errors in by_field.items():
        if errors[0]["type"] == "extra_forbidden":
            known = _known_fields(model, [part for part in errors[0]["loc"][:-1] if isinstance(part, str)])
            hint = did_you_mean(str(errors[0]["loc"][-1]), known)
            message = hint or "check the spelling; eve uses snake_case names such as 'model_options'"
            message = f"unknown field ({message})"
        else:
            message = " or ".join(dict.fromkeys(str(e["msg"]) for e in errors))
        where = f" field {field!r}" if field else ""
        problems.append(DefinitionProblem(field or None, f"{definer}(): invalid{where}: {message}"))
    return problems


def _known_fields(model: type[BaseModel] | None, location: list[str]) -> list[str]:
    """The field names of the (nested) model at `location` under `model`, or none when unknown."""
    for part in location:
        if model is None or _is_union_tag(part):
            continue
        info = model.model_fields.get(part)
        model = _model_in(info.annotation) if info is not None else None
    return list(model.model_fields) if model is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None
