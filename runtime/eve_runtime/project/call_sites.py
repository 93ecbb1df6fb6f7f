"""Where in a user file a failing call or import is written, read with `ast` (nothing is run).

The loader knows the line a `define_*` call started on; these helpers find the line of each
argument inside it, the keyword names a call passes, and the names an import statement binds,
so that every diagnostic points at the text to change.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["ImportSite", "call_at", "definer_keyword_line", "field_line", "import_at", "keyword_lines"]

_SEGMENT = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@lru_cache(maxsize=64)
def _tree(path: Path, mtime_ns: int) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None


def _parsed(path: Path) -> ast.Module | None:
    try:
        return _tree(path, path.stat().st_mtime_ns)
    except OSError:
        return None


def call_at(path: Path, line: int | None, column: int | None) -> ast.Call | None:
    """The call written at `line` (and `column`, when known) of `path`: the one a traceback frame points at."""
    tree = _parsed(path)
    if tree is None or line is None:
        return None
    starting = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == line]
    exact = [node for node in starting if node.col_offset == column]
    if exact:
        return exact[0]
    # the outermost call starting on that line: `agent = define_agent(...)` rather than a call in its arguments
    return min(starting, key=lambda node: node.col_offset) if starting else None


def field_line(call: ast.Call, field: str | None) -> int:
    """The line of `field` (`limits.session_timeout_ms`, `tools[0]`) among the arguments of `call`.

    It follows keyword arguments, dict literals, nested calls and list items as far as the
    source spells them out; past that (`**options`, a variable) it is the line reached last.
    """
    node: ast.AST = call
    line = call.lineno
    for index, name in _SEGMENT.findall(field or ""):
        child = _child(node, int(index) if index else None, name)
        if child is None:
            break
        node, line = child, child.lineno
    return line


def _child(node: ast.AST, index: int | None, name: str) -> ast.expr | None:
    if index is not None:
        if isinstance(node, ast.List | ast.Tuple) and index < len(node.elts):
            return node.elts[index]
        return None
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == name:
                return keyword.value
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == name:
                return value
    return None


def keyword_lines(call: ast.Call) -> dict[str, int]:
    """The keyword arguments `call` passes by name, each with the line it is written on."""
    return {keyword.arg: keyword.lineno for keyword in call.keywords if keyword.arg is not None}


def definer_keyword_line(path: Path, definer: str, keyword: str) -> int | None:
    """The line of `keyword=` in the first `definer(...)` call of `path` (or of the call, without it)."""
    tree = _parsed(path)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name == definer:
            return keyword_lines(node).get(keyword, node.lineno)
    return None


@dataclass(frozen=True)
class ImportSite:
    """An absolute import of one module, as written in a user file."""

    module: str
    """The module imported (`agent.lib.helper`)."""
    names: tuple[str, ...]
    """`from ... import` names as written (`f`, `g as h`); empty for a plain `import`."""
    alias: str | None = None
    """`import x.y as alias`."""


def import_at(path: Path, line: int | None, module: str) -> ImportSite | None:
    """The absolute import of `module` (or of a module inside it) written at `line` of `path`."""
    tree = _parsed(path)
    if tree is None or line is None:
        return None
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) != line:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _within(node.module or "", module):
            names = tuple(f"{a.name} as {a.asname}" if a.asname else a.name for a in node.names)
            return ImportSite(module=node.module or "", names=names)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _within(alias.name, module):
                    return ImportSite(module=alias.name, names=(), alias=alias.asname)
    return None


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")
