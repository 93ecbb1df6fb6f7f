"""What a user file raised while being imported, turned into diagnostics that say where and how to fix it.

- a `DefinitionError` becomes one diagnostic per problem, each at the line of its argument;
- an unknown keyword argument names the closest real one (`reasonning=` -> `reasoning`);
- `from agent.lib.x import f` is told the relative import that works (`from ..lib.x import f`);
- anything else is reported with its type, message and the innermost line inside `agent/`.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType, ModuleType, TracebackType

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.errors import DefinitionError
from eve_runtime.project.call_sites import call_at, field_line, import_at, keyword_lines

__all__ = ["UserFrame", "failure_diagnostics"]

_UNEXPECTED_KEYWORD = re.compile(r"(?P<callable>[\w.<>]+)\(\) got an unexpected keyword argument '(?P<name>\w+)'")


class UserFrame:
    """The innermost traceback entry inside the agent folder: where the user's mistake is."""

    def __init__(self, path: Path, line: int | None, column: int | None, frame: FrameType | None) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.frame = frame

    @classmethod
    def of(cls, exc: BaseException, agent_root: Path, fallback: Path) -> UserFrame:
        """The entry of `exc`'s traceback in the agent folder nearest the raise (`fallback` when none is)."""
        found = cls(fallback, None, None, None)
        tracebacks: list[TracebackType] = []
        tb = exc.__traceback__
        while tb is not None:
            tracebacks.append(tb)
            tb = tb.tb_next
        for entry, summary in zip(tracebacks, traceback.extract_tb(exc.__traceback__), strict=False):
            path = Path(summary.filename)
            if path.is_relative_to(agent_root):
                found = cls(path, summary.lineno, getattr(summary, "colno", None), entry.tb_frame)
        return found


def failure_diagnostics(
    exc: BaseException,
    path: Path,
    *,
    agent_root: Path,
    namespace: str,
    module_name: Callable[[Path], str],
    relative: Callable[[Path], str],
    node_id: str,
) -> list[Diagnostic]:
    """The diagnostics of importing `path` (an agent file) having raised `exc`."""
    where = UserFrame.of(exc, agent_root, path)
    if isinstance(exc, DefinitionError):
        call = call_at(where.path, where.line, where.column)
        return [
            dg.error(
                "compile/definition-invalid",
                f"{problem.message} (in {relative(where.path)})",
                where.path,
                line=field_line(call, problem.field) if call is not None else where.line,
                node_id=node_id,
            )
            for problem in exc.problems
        ]
    if isinstance(exc, TypeError):
        unknown = _unknown_keywords(exc, where, relative, node_id)
        if unknown:
            return unknown
    hint = ""
    if isinstance(exc, ModuleNotFoundError) and exc.name and not exc.name.startswith(namespace):
        top = exc.name.split(".")[0]
        if top in {"agent", agent_root.name}:
            hint = " " + _relative_import_advice(where, exc.name, agent_root, module_name)
        else:
            hint = f" Install it (add {top!r} to your app's dependencies) or fix the import."
    return [
        dg.error(
            "compile/module-import-failed",
            # the private namespace means nothing to the user: show `agent.lib` for `_eve_app_3.lib`
            f"Importing {relative(path)} failed: {type(exc).__name__}: {str(exc).replace(namespace, 'agent')}.{hint}",
            where.path,
            line=where.line,
            node_id=node_id,
        )
    ]


def _unknown_keywords(
    exc: TypeError, where: UserFrame, relative: Callable[[Path], str], node_id: str
) -> list[Diagnostic]:
    """One diagnostic per keyword the failing call passes that its callable does not take."""
    match = _UNEXPECTED_KEYWORD.search(str(exc))
    call = call_at(where.path, where.line, where.column)
    if match is None or call is None or where.frame is None:
        return []
    target = _resolve(call.func, where.frame)
    parameters = _keyword_parameters(target)
    if parameters is None:
        return []
    name = match["callable"]
    ours = str(getattr(target, "__module__", None) or "").startswith("eve_runtime")
    found: list[Diagnostic] = []
    for keyword, line in keyword_lines(call).items():
        if keyword in parameters:
            continue
        hint = dg.did_you_mean(keyword, parameters) or f"it takes {', '.join(sorted(parameters))}"
        message = f"{name}() has no argument {keyword!r}: {hint}"
        if ours:
            message = f"{message} (in {relative(where.path)})"
        else:
            message = f"Importing {relative(where.path)} failed: {message}"
        code = "compile/definition-invalid" if ours else "compile/module-import-failed"
        found.append(dg.error(code, message, where.path, line=line, node_id=node_id))
    return found


def _resolve(expression: ast.expr, frame: FrameType) -> object:
    """The object a call's callee expression names (`define_agent`, `eve.define_agent`); None otherwise.

    Only names and attributes of modules and classes are followed, so nothing user-defined runs.
    """
    if isinstance(expression, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if expression.id in scope:
                return scope[expression.id]
        return None
    if isinstance(expression, ast.Attribute):
        owner = _resolve(expression.value, frame)
        if isinstance(owner, ModuleType | type):
            return getattr(owner, expression.attr, None)
    return None


def _keyword_parameters(target: object) -> list[str] | None:
    """The names `target` accepts as keywords; None when it takes any (`**kwargs`) or cannot be inspected."""
    if not callable(target):
        return None
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    kinds = {parameter.kind for parameter in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return None
    keywordable = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [name for name, parameter in signature.parameters.items() if parameter.kind in keywordable]


def _relative_import_advice(
    where: UserFrame, missing: str, agent_root: Path, module_name: Callable[[Path], str]
) -> str:
    """How to import another file of the agent folder from `where`: a relative import, spelled out."""
    site = import_at(where.path, where.line, missing.split(".")[0])
    generic = (
        f"The agent folder is not an importable package named {missing.split('.')[0]!r}: import its files "
        "with a relative import (from .lib.helper import f in agent/agent.py, from ..lib.helper import f in "
        "agent/tools/x.py)."
    )
    if site is None or not where.path.is_relative_to(agent_root):
        return generic
    importer = module_name(where.path).split(".")[1:]
    package = importer if where.path.name == "__init__.py" else importer[:-1]
    target = site.module.split(".")[1:]
    if site.names:
        statement = f"from {_relative(package, target)} import {', '.join(site.names)}"
    elif target:
        alias = f" as {site.alias}" if site.alias and site.alias != target[-1] else ""
        statement = f"from {_relative(package, target[:-1])} import {target[-1]}{alias}"
    else:
        return generic
    return (
        f"The agent folder is not an importable package named {site.module.split('.')[0]!r}: "
        f"write `{statement}` (a relative import) instead."
    )


def _relative(package: list[str], target: list[str]) -> str:
    common = 0
    while common < min(len(package), len(target)) and package[common] == target[common]:
        common += 1
    return "." * (len(package) - common + 1) + ".".join(target[common:])
