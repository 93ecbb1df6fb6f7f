"""Sandboxes: a workspace per session, the backends that run its commands, the framework tools that use it.

Workspaces live in `.eve/sandboxes/<id>/`; the tools are `bash`, `read_file`, `write_file`,
`glob`, `grep`, `web_fetch` and `web_search`.

The engine never imports this package: a tool reaches its session's sandbox through
`ToolContext.get_sandbox()`, which asks the runtime through the `SandboxAccess` port; the runtime
(`eve_runtime.sessions`) holds the app's `eve_runtime.sandbox.workspaces.Workspaces`, and the
compiler (`eve_runtime.project`) composes the framework tools from the functions here. (The
workspaces are not imported here, and the backends and `run_process` only when first asked for
(`__getattr__`): compiling, `eve info` included, never runs a command, and they bring
`subprocess`, `signal` and `logging`.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from eve_runtime.authoring.sandbox import NetworkPolicy
from eve_runtime.sandbox.spec import SandboxSpec, SkillFiles
from eve_runtime.sandbox.tool_bash import BASH_DESCRIPTION, BASH_INPUT_SCHEMA, bash
from eve_runtime.sandbox.tool_files import (
    READ_FILE_DESCRIPTION,
    READ_FILE_INPUT_SCHEMA,
    WRITE_FILE_DESCRIPTION,
    WRITE_FILE_INPUT_SCHEMA,
    read_file,
    write_file,
)
from eve_runtime.sandbox.tool_search import (
    GLOB_DESCRIPTION,
    GLOB_INPUT_SCHEMA,
    GREP_DESCRIPTION,
    GREP_INPUT_SCHEMA,
    glob,
    grep,
)
from eve_runtime.sandbox.tool_web_fetch import WEB_FETCH_DESCRIPTION, WEB_FETCH_INPUT_SCHEMA, web_fetch_tool
from eve_runtime.sandbox.tool_web_search import (
    NO_PROVIDER,
    WEB_SEARCH_DESCRIPTION,
    WEB_SEARCH_INPUT_SCHEMA,
    web_search_tool,
)

if TYPE_CHECKING:
    from eve_runtime.sandbox.backends import backend_for, describe_backend, layout_for
    from eve_runtime.sandbox.bwrap import BwrapBackend, bwrap_unavailable
    from eve_runtime.sandbox.local import LocalBackend
    from eve_runtime.sandbox.process import run_process

__all__ = [
    "FRAMEWORK_TOOLS",
    "NO_PROVIDER",
    "BwrapBackend",
    "FrameworkTool",
    "LocalBackend",
    "SandboxSpec",
    "SkillFiles",
    "backend_for",
    "bwrap_unavailable",
    "describe_backend",
    "framework_function",
    "framework_tool_name",
    "layout_for",
    "run_process",
    "web_search_tool",
]

_LAZY = {
    "backend_for": "backends",
    "describe_backend": "backends",
    "layout_for": "backends",
    "BwrapBackend": "bwrap",
    "bwrap_unavailable": "bwrap",
    "LocalBackend": "local",
    "run_process": "process",
}
"""The names this package re-exports from the modules that run commands, imported on first use."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


FrameworkTool = tuple[str, dict[str, Any]]
"""A framework tool's description and input schema (eve's)."""

FRAMEWORK_TOOLS: dict[str, FrameworkTool] = {
    "bash": (BASH_DESCRIPTION, BASH_INPUT_SCHEMA),
    "read_file": (READ_FILE_DESCRIPTION, READ_FILE_INPUT_SCHEMA),
    "write_file": (WRITE_FILE_DESCRIPTION, WRITE_FILE_INPUT_SCHEMA),
    "web_fetch": (WEB_FETCH_DESCRIPTION, WEB_FETCH_INPUT_SCHEMA),
    "web_search": (WEB_SEARCH_DESCRIPTION, WEB_SEARCH_INPUT_SCHEMA),
    "glob": (GLOB_DESCRIPTION, GLOB_INPUT_SCHEMA),
    "grep": (GREP_DESCRIPTION, GREP_INPUT_SCHEMA),
}
"""The framework tools this package implements, by name."""

_FIXED: dict[str, Callable[..., Any]] = {
    "bash": bash,
    "read_file": read_file,
    "write_file": write_file,
    "glob": glob,
    "grep": grep,
}


def framework_function(name: str, network: NetworkPolicy) -> Callable[..., Any] | None:
    """The function behind framework tool `name` for an agent with this network policy (None: it has none)."""
    if name == "web_fetch":
        return web_fetch_tool(network)
    return _FIXED.get(name)


def framework_tool_name(function: object) -> str | None:
    """Which framework tool a function is (this package's own, or one its factories made), if any."""
    module = str(getattr(function, "__module__", ""))
    name = str(getattr(function, "__name__", ""))
    if module.startswith("eve_runtime.sandbox.tool_") and name in FRAMEWORK_TOOLS:
        return name
    return None
