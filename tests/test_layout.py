"""The layers of `eve_runtime`, held: which subpackage may import which, and no import cycles.

Read with `ast`, so nothing is imported. Every import counts: at module level, under
`TYPE_CHECKING`, and inside functions. The nodes are the subpackages of `eve_runtime`, plus
`basics` (the modules directly in `eve_runtime/` that everything imports) and `api` (the public
modules directly in `eve_runtime/` that gather the authoring API for users).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "runtime" / "eve_runtime"
CLI = REPO / "eve_cli"

API = frozenset({"eve_runtime", "eve_runtime.channels", "eve_runtime.framework_tools"})
"""The public modules directly in `eve_runtime/`: they gather what users import, from anywhere below."""

ALLOWED: dict[str, frozenset[str]] = {
    "basics": frozenset(),
    "models": frozenset({"basics"}),
    "store": frozenset({"basics"}),
    "events": frozenset({"basics", "models"}),
    "authoring": frozenset({"basics", "events", "models"}),
    "sandbox": frozenset({"basics", "authoring"}),
    "connections": frozenset({"basics", "authoring"}),
    "project": frozenset({"basics", "authoring", "events", "models", "sandbox"}),
    "telemetry": frozenset({"basics"}),
    "tasks": frozenset({"basics", "authoring", "events", "models", "project", "store", "telemetry"}),
    "engine": frozenset({"basics", "authoring", "events", "models", "project", "store", "tasks", "telemetry"}),
    "sessions": frozenset(
        {
            "basics",
            "authoring",
            "events",
            "models",
            "project",
            "store",
            "tasks",
            "engine",
            "sandbox",
            "connections",
            "telemetry",
        }
    ),
    "server": frozenset(
        {"basics", "authoring", "events", "models", "project", "store", "engine", "sessions", "telemetry"}
    ),
    "serving": frozenset(
        {
            "basics",
            "authoring",
            "events",
            "models",
            "project",
            "store",
            "sessions",
            "server",
            "connections",
            "telemetry",
        }
    ),
    "client": frozenset({"basics", "events"}),
    "evals": frozenset(
        {"basics", "authoring", "models", "project", "engine", "sessions", "server", "serving", "client"}
    ),
    "api": frozenset({"basics", "authoring", "events", "sessions", "sandbox"}),
}
"""Which nodes each node may import (besides itself). Data flows down: the table has no cycle."""

CLI_ALLOWED = frozenset(
    {
        "eve_runtime",
        "eve_runtime.errors",
        "eve_runtime.diagnostics",
        "eve_runtime.routes",
        "eve_runtime.redaction",
        "eve_runtime.client",
        "eve_runtime.models.ids",
        "eve_runtime.models.providers",
        "eve_runtime.project.paths",
        "eve_runtime.project.compiler",
        "eve_runtime.project.manifest",
        "eve_runtime.project.info",
        "eve_runtime.serving.serve",
        "eve_runtime.serving.dev_server",
        "eve_runtime.serving.fire",
        "eve_runtime.serving.connection_check",
        "eve_runtime.evals",
    }
)
"""What `eve_cli` may import: the public API and the service entry points. The CLI stays thin."""

THIRD_PARTY_BANNED = {"engine": ("starlette", "uvicorn"), "tasks": ("starlette", "uvicorn")}
"""The engine (and the tasks it runs) never touch HTTP."""

MAX_LINES = 400
MAX_BASICS = 15


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return _modules()[name].name == "__init__.py"


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports_of(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every module `path` imports (eve_runtime's, by name, and third-party ones by top-level name)."""
    modules = _modules()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, node)
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield (submodule if submodule in modules else target), node.lineno


@cache
def _graph() -> dict[str, tuple[Import, ...]]:
    """eve_runtime's own imports, by importing module."""
    modules = _modules()
    graph: dict[str, tuple[Import, ...]] = {}
    for name, path in modules.items():
        found = {
            target: Import(name, target, line)
            for target, line in _imports_of(name, path)
            if target in modules and target != name
        }
        graph[name] = tuple(found.values())
    return graph


def node_of(module: str) -> str:
    """The layer node of an eve_runtime module."""
    parts = module.split(".")
    if module in API:
        return "api"
    if len(parts) == 2 and not _is_package(module):
        return "basics"
    return parts[1]


def test_every_subpackage_is_in_the_table() -> None:
    nodes = {node_of(name) for name in _modules()}
    assert nodes == set(ALLOWED), f"add new subpackages to ALLOWED (or remove stale rows): {nodes ^ set(ALLOWED)}"


def test_the_table_has_no_cycle() -> None:
    cycle = _cycle({node: sorted(deps) for node, deps in ALLOWED.items()})
    assert cycle is None, "the layers go round: " + " -> ".join(cycle or [])


def test_imports_follow_the_table() -> None:
    wrong = [
        f"{imp.importer} ({node_of(imp.importer)}) imports {imp.target} ({node_of(imp.target)}), line {imp.line}"
        for imports in _graph().values()
        for imp in imports
        if node_of(imp.target) != node_of(imp.importer) and node_of(imp.target) not in ALLOWED[node_of(imp.importer)]
    ]
    assert not wrong, "imports that go against the layers:\n" + "\n".join(wrong)


def test_no_import_cycle() -> None:
    graph = {name: sorted(imp.target for imp in imports) for name, imports in _graph().items()}
    cycle = _cycle(graph)
    assert cycle is None, "an import cycle: " + " -> ".join(cycle or [])


def test_engine_and_tasks_never_touch_http() -> None:
    wrong = [
        f"{name} imports {target}, line {line}"
        for name, path in _modules().items()
        for target, line in _imports_of(name, path)
        if target.split(".")[0] in THIRD_PARTY_BANNED.get(node_of(name), ())
    ]
    assert not wrong, "\n".join(wrong)


def test_discovery_never_imports_the_loader() -> None:
    """Discovery never runs user code: nothing it imports, however indirectly, is the loader."""
    reached = _reachable("eve_runtime.project.discovery")
    assert "eve_runtime.project.loader" not in reached
    assert "eve_runtime.project.compiler" not in reached


def test_the_cli_imports_only_public_modules() -> None:
    wrong = []
    for path in sorted(CLI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                targets = [node.module]
            else:
                continue
            for target in targets:
                if target.startswith("eve_runtime") and target not in CLI_ALLOWED:
                    wrong.append(f"{path.relative_to(REPO)}:{node.lineno} imports {target}")
    assert not wrong, "eve_cli may import only the public API and the service entry points:\n" + "\n".join(wrong)


def test_modules_stay_small_and_the_basics_few() -> None:
    long = [
        f"{path.relative_to(REPO)}: {lines} lines"
        for path in _modules().values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_BASICS, f"{len(top)} modules directly in eve_runtime/: {top}"


def _reachable(start: str) -> set[str]:
    graph = _graph()
    seen: set[str] = set()
    stack = [start]
    while stack:
        for imp in graph[stack.pop()]:
            if imp.target not in seen:
                seen.add(imp.target)
                stack.append(imp.target)
    return seen


def _cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One cycle of the graph, as the path that closes it, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in graph.get(node, []):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


@pytest.mark.parametrize("module", ["eve_runtime.channels", "eve_runtime.framework_tools", "eve_runtime"])
def test_public_modules_are_api(module: str) -> None:
    assert node_of(module) == "api"
