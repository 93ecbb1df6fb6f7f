"""Which backend runs a sandbox's commands, and what its folders look like to them.

`auto` (the default) is bubblewrap where it runs, else `local` (which warns that it isolates
nothing). Naming `bwrap` requires it: where it cannot run, the first sandbox access fails with
the reason. A custom backend (any object with `name`, `isolated`, `unavailable()` and `run()`)
is used as given; when it has no `layout(workspace_dir, home_dir)`, its commands are expected to
see the workspace at `/workspace` and the home folder at `/home/eve`, as under bubblewrap.
"""

from __future__ import annotations

from pathlib import Path

from eve_runtime.authoring.sandbox import SandboxConfig
from eve_runtime.authoring.sandbox_session import WORKSPACE, SandboxBackend, SandboxError, WorkspaceLayout
from eve_runtime.sandbox.bwrap import BWRAP_HOME, BwrapBackend
from eve_runtime.sandbox.local import LocalBackend

__all__ = ["backend_for", "describe_backend", "layout_for"]


def backend_for(config: SandboxConfig) -> SandboxBackend:
    """The backend that runs the commands of a sandbox defined by `config`.

    Raises:
        SandboxError: The backend it names cannot run here (the message says why and what to do).
    """
    chosen = config.backend
    if isinstance(chosen, str):
        if chosen == "local":
            return LocalBackend()
        bwrap = BwrapBackend()
        reason = bwrap.unavailable()
        if reason is None:
            return bwrap
        if chosen == "bwrap":
            raise SandboxError(f"the sandbox's backend is 'bwrap', but {reason}")
        return LocalBackend()
    reason = chosen.unavailable()
    if reason is not None:
        raise SandboxError(f"the sandbox's backend {chosen.name!r} cannot run here: {reason}")
    return chosen


def describe_backend(config: SandboxConfig) -> tuple[str, str | None]:
    """The backend a sandbox would use here, and a note when it is not the one asked for or cannot run."""
    try:
        backend = backend_for(config)
    except SandboxError as exc:
        return config.backend_kind, str(exc)
    if config.backend == "auto" and backend.name == "local":
        return "local", f"bubblewrap cannot run here ({BwrapBackend().unavailable()}): commands are not isolated"
    return backend.name, None


def layout_for(backend: SandboxBackend, workspace_dir: Path, home_dir: Path) -> WorkspaceLayout:
    """How the backend's commands see a sandbox's two folders."""
    layout = getattr(backend, "layout", None)
    if callable(layout):
        result = layout(workspace_dir, home_dir)
        if isinstance(result, WorkspaceLayout):
            return result
    return WorkspaceLayout(workspace_dir=workspace_dir, home_dir=home_dir, home=BWRAP_HOME, workspace=WORKSPACE)
