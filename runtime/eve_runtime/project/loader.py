"""Loading user code: each file of `agent/` imported by path under a private namespace.

Every load (a *generation*) gets its own top-level package, `_eve_app_<n>`, whose search path is
the agent folder, so `agent/tools/get_weather.py` becomes `_eve_app_1.tools.get_weather`:

- user files never shadow real modules (`agent/tools/json.py` is not `json`);
- relative imports inside `agent/` work (`from ..lib.weather import forecast`);
- two generations of the same app live side by side until the old one is released.

A failure inside a user file becomes diagnostics naming the file and line, never a traceback
(see `eve_runtime.project.load_failures`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.load_failures import failure_diagnostics

__all__ = ["ModuleLoader"]

_generations = itertools.count(1)
_NAMESPACE_PREFIX = "_eve_app_"


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles a user file from its source on every load, never from a cached `.pyc`.

    A `.pyc` is trusted when the source's size and mtime (in whole seconds) match, so an edit of
    the same size within a second of the previous load would go unseen by the next generation.
    It also keeps `__pycache__/` folders out of the user's `agent/`.
    """

    def get_code(self, fullname: str) -> CodeType:
        return self.source_to_code(self.get_data(self.path), self.path)


class _GenerationFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of every generation as the path finder does, loading them with `_FreshSourceLoader`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is None or not fullname.startswith(_NAMESPACE_PREFIX):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader and spec.origin:
            spec.loader = _FreshSourceLoader(fullname, spec.origin)
        return spec


def _install_finder() -> None:
    if not any(isinstance(finder, _GenerationFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _GenerationFinder())


class ModuleLoader:
    """Imports the module sources of one agent folder under a fresh namespace."""

    def __init__(self, agent_root: Path) -> None:
        self.agent_root = agent_root.resolve()
        self.generation = next(_generations)
        self.namespace = f"{_NAMESPACE_PREFIX}{self.generation}"
        _install_finder()
        spec = importlib.machinery.ModuleSpec(self.namespace, None, is_package=True)
        spec.submodule_search_locations = [str(self.agent_root)]
        package = importlib.util.module_from_spec(spec)
        package.__doc__ = f"User code of {self.agent_root} (generation {self.generation})."
        sys.modules[self.namespace] = package
        importlib.invalidate_caches()  # files added since the last generation must be seen

    def module_name(self, path: Path) -> str:
        """The import name of a file under the agent folder."""
        relative = path.resolve().relative_to(self.agent_root).with_suffix("")
        parts = list(relative.parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        return ".".join([self.namespace, *parts])

    def load(self, path: Path, *, node_id: str = "__root__") -> ModuleType | Diagnostic:
        """Import one user file, or describe (the first thing) that failed."""
        found: list[Diagnostic] = []
        module = self.load_into(path, found, node_id=node_id)
        return module if module is not None else found[0]

    def load_into(self, path: Path, diagnostics: list[Diagnostic], *, node_id: str = "__root__") -> ModuleType | None:
        """Import one user file; None when it failed, with every problem found added to `diagnostics`."""
        name = self.module_name(path)
        try:
            return importlib.import_module(name)
        except SyntaxError as exc:
            file = Path(exc.filename) if exc.filename else path
            diagnostics.append(
                dg.error(
                    "compile/module-import-failed",
                    f"{self._relative(file)} has a syntax error: {exc.msg}",
                    file,
                    line=exc.lineno,
                    node_id=node_id,
                )
            )
        except (Exception, SystemExit) as exc:  # whatever a user module raises is reported, not propagated
            diagnostics.extend(
                failure_diagnostics(
                    exc,
                    path,
                    agent_root=self.agent_root,
                    namespace=self.namespace,
                    module_name=self.module_name,
                    relative=self._relative,
                    node_id=node_id,
                )
            )
        return None

    def owns(self, module_name: str) -> bool:
        """Whether a module (by import name) is this generation's."""
        return module_name == self.namespace or module_name.startswith(self.namespace + ".")

    @staticmethod
    def is_user_module(module_name: str) -> bool:
        """Whether a module (by import name) is user code of any generation."""
        return module_name.startswith(_NAMESPACE_PREFIX)

    def release(self) -> None:
        """Forget this generation's modules (running code keeps the objects it holds)."""
        prefix = self.namespace + "."
        # A copy made in one C call: this runs from a finalizer too, and another thread may be importing.
        for name in [n for n in tuple(sys.modules) if n == self.namespace or n.startswith(prefix)]:
            sys.modules.pop(name, None)

    def _relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.agent_root.parent).as_posix()
        except ValueError:
            return str(path)
