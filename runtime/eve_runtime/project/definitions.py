"""Finding the definition a user module holds (an `agent`, a tool function, a hook, ...)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic

if TYPE_CHECKING:
    from eve_runtime.project.loader import ModuleLoader
    from eve_runtime.project.sources import Source

__all__ = ["Found", "find_definition", "module_definition"]


@dataclass(frozen=True)
class Found:
    """A definition and the module attribute that holds it."""

    name: str
    value: Any


def find_definition(
    module: ModuleType,
    kinds: tuple[type, ...],
    *,
    path: Path,
    what: str,
    example: str,
    node_id: str,
    preferred: str | None = None,
) -> Found | Diagnostic:
    """The one module-level value of one of `kinds`, or a diagnostic saying what to write.

    When several values qualify, the one named `preferred` wins; otherwise it is ambiguous.
    """
    seen: dict[int, Found] = {}
    for attribute, value in vars(module).items():
        if not attribute.startswith("_") and isinstance(value, kinds) and id(value) not in seen:
            seen[id(value)] = Found(attribute, value)
    found = list(seen.values())
    if len(found) == 1:
        return found[0]
    if preferred is not None:
        for item in found:
            if item.name == preferred:
                return item
    if not found:
        return dg.error(
            "compile/definition-missing",
            f"{path.name} defines no {what}. Add one at module level, for example: {example}",
            path,
            node_id=node_id,
        )
    names = ", ".join(repr(item.name) for item in found)
    return dg.error(
        "compile/definition-ambiguous",
        f"{path.name} defines several {what}s ({names}); keep exactly one.",
        path,
        node_id=node_id,
    )


def module_definition(
    source: Source,
    kinds: tuple[type, ...],
    loader: ModuleLoader,
    diagnostics: list[Diagnostic],
    *,
    node_id: str,
    what: str,
    example: str,
    preferred: str | None = None,
) -> Found | None:
    """Load `source` and find its one definition of `kinds`; None with the problem reported in `diagnostics`."""
    module = loader.load_into(source.path, diagnostics, node_id=node_id)
    if module is None:
        return None
    found = find_definition(
        module, kinds, path=source.path, what=what, example=example, node_id=node_id, preferred=preferred
    )
    if isinstance(found, Diagnostic):
        diagnostics.append(found)
        return None
    return found
