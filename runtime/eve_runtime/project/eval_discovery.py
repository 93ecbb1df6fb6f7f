"""Finding an app's evals: `evals/**/*.eval.py` and the one `evals/evals_config.py` (no user code runs).

An eval's id is its path under `evals/` without `.eval.py` (`evals/weather/paris.eval.py` is
`weather/paris`); a file that defines a list of evals gives `<id>/0000`, `<id>/0001`, ...
Ids given on the command line pick evals exactly or by directory prefix (`weather` picks
`weather`, everything under `weather/`, and every entry of a `weather.eval.py` list).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eve_runtime.errors import UserError

__all__ = [
    "CONFIG_FILE",
    "EVALS_DIR",
    "EVAL_SUFFIX",
    "EvalConfigError",
    "EvalFile",
    "EvalSources",
    "discover_evals",
    "select_ids",
]

EVALS_DIR = "evals"
EVAL_SUFFIX = ".eval.py"
CONFIG_FILE = "evals_config.py"
CONFIG_EXAMPLE = "from eve_runtime import define_eval_config\n\nconfig = define_eval_config()"


class EvalConfigError(UserError):
    """The evals cannot run as laid out (no `evals/`, no config, an unknown id): `eve eval` exits 2."""


@dataclass(frozen=True)
class EvalFile:
    """One `*.eval.py` file and the id it gives its eval(s)."""

    id: str
    path: Path


@dataclass(frozen=True)
class EvalSources:
    """The evals folder of an app: its config file and its eval files, sorted by id."""

    app_root: Path
    config: Path
    files: tuple[EvalFile, ...]


def _eval_id(evals_dir: Path, path: Path) -> str:
    relative = path.relative_to(evals_dir).as_posix()
    return relative[: -len(EVAL_SUFFIX)]


def discover_evals(app_root: Path) -> EvalSources:
    """The eval files and config of the app at `app_root`.

    Raises:
        EvalConfigError: There is no `evals/` folder or no `evals/evals_config.py` in it.
    """
    evals_dir = app_root / EVALS_DIR
    if not evals_dir.is_dir():
        raise EvalConfigError(
            f"{app_root} has no {EVALS_DIR}/ folder. Create {EVALS_DIR}/{CONFIG_FILE} and one "
            f"{EVALS_DIR}/<name>{EVAL_SUFFIX} per eval (eve init's template has two)."
        )
    config = evals_dir / CONFIG_FILE
    if not config.is_file():
        raise EvalConfigError(
            f"{evals_dir} has no {CONFIG_FILE}: every app with evals needs exactly one. "
            f"Create {EVALS_DIR}/{CONFIG_FILE} with:\n\n{CONFIG_EXAMPLE}"
        )
    files = [
        EvalFile(_eval_id(evals_dir, path), path)
        for path in evals_dir.rglob(f"*{EVAL_SUFFIX}")
        if path.is_file() and not any(part.startswith((".", "__")) for part in path.relative_to(evals_dir).parts)
    ]
    return EvalSources(app_root, config, tuple(sorted(files, key=lambda item: item.id)))


def _picks(selector: str, eval_id: str) -> bool:
    return eval_id == selector or eval_id.startswith(selector + "/")


def select_ids(ids: Iterable[str], selectors: Sequence[str]) -> list[str]:
    """The ids `selectors` pick (all of them when there are none), in their order.

    Raises:
        EvalConfigError: A selector picks nothing (the message lists the ids there are).
    """
    known = list(ids)
    if not selectors:
        return known
    cleaned = [selector.strip().strip("/") for selector in selectors]
    for selector in cleaned:
        if not any(_picks(selector, eval_id) for eval_id in known):
            listed = ", ".join(known) or "none"
            raise EvalConfigError(f"No eval has the id or prefix {selector!r}. The evals are: {listed}.")
    return [eval_id for eval_id in known if any(_picks(selector, eval_id) for selector in cleaned)]
