"""Where an eve app lives: its root, its agent folder, and the files eve writes under `.eve/`."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from eve_runtime.errors import ProjectNotFoundError

__all__ = ["AppPaths", "app_name", "find_app_root", "load_env_files"]

AGENT_DIRECTORY = "agent"


def find_app_root(start: Path | None = None) -> Path:
    """The nearest folder, from `start` (default: the working directory) upwards, that holds `agent/`.

    Raises:
        ProjectNotFoundError: No such folder up to the filesystem root.
    """
    origin = (start or Path.cwd()).resolve()
    for candidate in (origin, *origin.parents):
        if (candidate / AGENT_DIRECTORY).is_dir():
            return candidate
    raise ProjectNotFoundError(origin)


@dataclass(frozen=True)
class AppPaths:
    """The paths of one app: its sources and everything eve writes under `.eve/`."""

    app_root: Path

    @property
    def agent_root(self) -> Path:
        return self.app_root / AGENT_DIRECTORY

    @property
    def eve_dir(self) -> Path:
        return self.app_root / ".eve"

    @property
    def diagnostics_file(self) -> Path:
        return self.eve_dir / "discovery" / "diagnostics.json"

    @property
    def discovery_manifest_file(self) -> Path:
        return self.eve_dir / "discovery" / "agent-discovery-manifest.json"

    @property
    def manifest_file(self) -> Path:
        return self.eve_dir / "compile" / "manifest.json"

    @property
    def compile_metadata_file(self) -> Path:
        return self.eve_dir / "compile" / "compile-metadata.json"

    @property
    def workflow_data_dir(self) -> Path:
        return self.eve_dir / "workflow-data"

    @property
    def logs_dir(self) -> Path:
        return self.eve_dir / "logs"


_PEP503 = re.compile(r"[-_.]+")


def app_name(app_root: Path) -> str:
    """The root agent's name: `[project].name` of the app's `pyproject.toml`, else the folder name."""
    pyproject = app_root / "pyproject.toml"
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return app_root.name
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    if isinstance(name, str) and name.strip():
        return name.strip()
    return app_root.name


_FROM_FILES: dict[int, dict[str, str]] = {}
"""Per environment mapping: the variables `load_env_files` set, with the values it set."""


def load_env_files(app_root: Path, environ: MutableMapping[str, str] | None = None) -> list[Path]:
    """Load `.env` then `.env.local` from the app root into the environment.

    Variables already set in the environment win over both files; `.env.local` wins over `.env`.
    Called again (a reload), it updates the variables an earlier call set from the files, and
    removes those the files no longer hold.

    Returns:
        The files that were read.
    """
    target = os.environ if environ is None else environ
    loaded: list[Path] = []
    merged: dict[str, str] = {}
    for name in (".env", ".env.local"):
        path = app_root / name
        if path.is_file():
            from dotenv import dotenv_values  # only then: the template has neither file (`eve info`'s time)

            values = dotenv_values(path)
            merged.update({key: value for key, value in values.items() if value is not None})
            loaded.append(path)
    ours = _FROM_FILES.setdefault(id(target), {})
    for key in [k for k in ours if k not in merged]:
        if target.get(key) == ours.pop(key):
            del target[key]
    for key, value in merged.items():
        if key in ours and target.get(key) == ours[key]:
            target[key] = value  # set from a file before: the file's new value applies
        elif key not in target:
            target[key] = value
        else:
            continue  # the real environment wins
        ours[key] = value
    return loaded
