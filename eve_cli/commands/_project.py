"""Shared by the commands that work on the app in (or above) the current folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from eve_cli._console import fail

if TYPE_CHECKING:
    from eve_runtime.project.compiler import CompiledApp


def compile_current_app(start: Path | None = None) -> CompiledApp:
    """Find the app from the working folder upwards, load its .env files, and compile it."""
    from eve_runtime.errors import ProjectNotFoundError
    from eve_runtime.project.compiler import compile_app
    from eve_runtime.project.paths import find_app_root, load_env_files

    try:
        app_root = find_app_root(start)
    except ProjectNotFoundError as exc:
        fail(str(exc))
    load_env_files(app_root)
    return compile_app(app_root)
