"""Turn pydantic validation errors into eve's `DefinitionError`s that name the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import ValidationError

from eve_runtime.errors import DefinitionError

T = TypeVar("T")

_UNION_TAGS = {"int", "bool", "float", "str", "dict", "list", "none"}


def field_path(location: tuple[int | str, ...]) -> str:
    """`("limits", "session_timeout_ms")` -> `limits.session_timeout_ms`, without pydantic's union-member tags."""
    parts: list[str] = []
    for item in location:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif any(mark in item for mark in "-[(") or item in _UNION_TAGS:
            continue  # a union member such as `constrained-int` or `literal[False]`, not a user field
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


def validated(definer: str, build: Callable[[], T]) -> T:
    """Run a pydantic constructor; re-raise its errors as one `DefinitionError` naming the first bad field."""
    try:
        return build()
    except ValidationError as exc:
        errors = exc.errors()
        field = field_path(tuple(errors[0]["loc"]))
        same_field = [e for e in errors if field_path(tuple(e["loc"])) == field]
        if errors[0]["type"] == "extra_forbidden":
            message = "unknown field (check the spelling; eve uses snake_case names such as 'model_options')"
        else:
            message = " or ".join(dict.fromkeys(str(e["msg"]) for e in same_field))
        others = len(errors) - len(same_field)
        where = f" field {field!r}" if field else ""
        more = f" (and {others} more problem(s))" if others else ""
        raise DefinitionError(f"{definer}(): invalid{where}: {message}{more}", field=field or None) from None
