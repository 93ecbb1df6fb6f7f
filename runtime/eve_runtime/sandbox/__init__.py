"""Sandboxes: a workspace per session, and the backends that run its commands.

Workspaces live in `.eve/sandboxes/<id>/`. The engine never imports this package: a tool reaches
its session's sandbox through `ToolContext.get_sandbox()`, which asks the runtime through the
`SandboxAccess` port; the runtime (`eve_runtime.sessions`) holds the app's
`eve_runtime.sandbox.workspaces.Workspaces`.
"""

from __future__ import annotations

from eve_runtime.sandbox.backends import backend_for, describe_backend, layout_for
from eve_runtime.sandbox.bwrap import BwrapBackend, bwrap_unavailable
from eve_runtime.sandbox.local import LocalBackend
from eve_runtime.sandbox.process import run_process
from eve_runtime.sandbox.spec import SandboxSpec, SkillFiles

__all__ = [
    "BwrapBackend",
    "LocalBackend",
    "SandboxSpec",
    "SkillFiles",
    "backend_for",
    "bwrap_unavailable",
    "describe_backend",
    "layout_for",
    "run_process",
]
