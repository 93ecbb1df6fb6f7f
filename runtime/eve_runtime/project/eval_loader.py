"""Loading eval modules by path: each `*.eval.py` file's eval(s) and `evals_config.py`'s config.

Eval files are not importable by name (their names hold a dot), so each is executed from its
path under a private module name, with the app root on `sys.path` while it loads (so an eval
may import `evals.<helpers>` or the app's own packages). Whatever a file raises becomes an
[`EvalLoadError`][eve_runtime.project.eval_loader.EvalLoadError] naming the file and line.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from eve_runtime.authoring.evals import EvalConfig, EvalDefinition
from eve_runtime.errors import UserError
from eve_runtime.project.eval_discovery import EvalFile, EvalSources

__all__ = ["EvalLoadError", "LoadedEval", "load_config", "load_evals"]

_counter = itertools.count(1)
EVAL_EXAMPLE = "eval = define_eval(test)  # with `async def test(t): ...`"


class EvalLoadError(UserError):
    """An eval file (or the config) failed to load or defines nothing usable."""


@dataclass(frozen=True)
class LoadedEval:
    """One eval, ready to run."""

    id: str
    path: Path
    definition: EvalDefinition


def _where(exc: BaseException, path: Path) -> str:
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == str(path)]
    return f"{path}:{frames[-1].lineno}" if frames else str(path)


def _execute(path: Path, app_root: Path) -> ModuleType:
    name = f"_eve_evals_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EvalLoadError(f"{path} cannot be loaded as Python.")
    module = importlib.util.module_from_spec(spec)
    added = str(app_root) not in sys.path
    if added:
        sys.path.insert(0, str(app_root))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise EvalLoadError(f"{exc.filename or path}:{exc.lineno} has a syntax error: {exc.msg}") from None
    except (Exception, SystemExit) as exc:  # whatever user code raises is reported, not propagated
        raise EvalLoadError(f"{_where(exc, path)}: loading failed: {type(exc).__name__}: {exc}") from None
    finally:
        if added:
            sys.path.remove(str(app_root))
    return module


def _definitions(module: ModuleType, file: EvalFile) -> list[LoadedEval]:
    found: dict[int, Any] = {}
    for attribute, value in vars(module).items():
        if attribute.startswith("_"):
            continue
        if isinstance(value, EvalDefinition) or (
            isinstance(value, (list, tuple)) and value and all(isinstance(item, EvalDefinition) for item in value)
        ):
            found.setdefault(id(value), (attribute, value))
    if not found:
        raise EvalLoadError(
            f"{file.path} defines no eval. Add one at module level, for example: {EVAL_EXAMPLE} "
            "(or a list of define_eval(...) for a dataset)."
        )
    if len(found) > 1:
        names = ", ".join(repr(name) for name, _value in found.values())
        raise EvalLoadError(f"{file.path} defines several evals ({names}); keep one (a list for a dataset).")
    ((_name, value),) = found.values()
    if isinstance(value, EvalDefinition):
        return [LoadedEval(file.id, file.path, value)]
    return [LoadedEval(f"{file.id}/{index:04d}", file.path, item) for index, item in enumerate(value)]


def load_evals(sources: EvalSources) -> list[LoadedEval]:
    """Every eval of the app, by id.

    Raises:
        EvalLoadError: A file failed to load or defines no eval.
    """
    loaded: list[LoadedEval] = []
    for file in sources.files:
        loaded.extend(_definitions(_execute(file.path, sources.app_root), file))
    return loaded


def load_config(sources: EvalSources) -> EvalConfig:
    """The app's `EvalConfig` (from `evals/evals_config.py`).

    Raises:
        EvalLoadError: The file failed to load or defines no (or several) configs.
    """
    module = _execute(sources.config, sources.app_root)
    configs = {
        id(value): value
        for name, value in vars(module).items()
        if isinstance(value, EvalConfig) and not name.startswith("_")
    }
    if len(configs) != 1:
        what = "no" if not configs else "several"
        raise EvalLoadError(
            f"{sources.config} defines {what} eval config; it needs exactly one, for example: "
            "config = define_eval_config()"
        )
    return next(iter(configs.values()))
