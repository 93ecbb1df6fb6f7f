"""Warnings for tool parameters without a type hint: their schema is `{}`, so the model may send anything."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.schema import FunctionSchema
from eve_runtime.diagnostics import Diagnostic

__all__ = ["untyped_parameter_warnings"]

_SUGGESTED = {bool: "bool", int: "int", float: "float", str: "str", list: "list[str]", dict: "dict[str, str]"}


def untyped_parameter_warnings(
    tool_name: str, function: Callable[..., Any], schema: FunctionSchema, path: Path, *, node_id: str
) -> list[Diagnostic]:
    """One `compile/tool-parameter-untyped` warning per parameter of `function` without an annotation."""
    if not schema.untyped:
        return []
    lines = _parameter_lines(function)
    parameters = inspect.signature(function).parameters
    found: list[Diagnostic] = []
    for name in schema.untyped:
        default = parameters[name].default
        suggested = _SUGGESTED.get(type(default), "str") if default is not inspect.Parameter.empty else "str"
        written = f"{name}: {suggested}" + (f" = {default!r}" if default is not inspect.Parameter.empty else "")
        found.append(
            dg.warning(
                "compile/tool-parameter-untyped",
                f"Tool {tool_name!r}: parameter {name!r} has no type hint, so its input schema is {{}} and the "
                f"model may send any JSON value for it. Annotate it, for example `{written}`.",
                path,
                line=lines.get(name),
                node_id=node_id,
            )
        )
    return found


def _parameter_lines(function: Callable[..., Any]) -> dict[str, int]:
    """The line of each parameter of `function`, read from its source file (empty when unreadable)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return {}
    try:
        tree = ast.parse(Path(code.co_filename).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name != code.co_name:
            continue
        if code.co_firstlineno in {node.lineno, *(d.lineno for d in node.decorator_list)}:
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            return {argument.arg: argument.lineno for argument in every}
    return {}
