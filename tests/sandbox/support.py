"""Shared helpers of the sandbox tests: bubblewrap's availability, backends, a sandbox on a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_runtime.authoring.sandbox import SandboxConfig, define_sandbox
from eve_runtime.sandbox import SandboxSpec, bwrap_unavailable
from eve_runtime.sandbox.handle import HostSandbox
from eve_runtime.sandbox.workspaces import Workspaces

BWRAP_PROBLEM = bwrap_unavailable()
"""Why bubblewrap cannot run here (not installed, or the kernel forbids its namespaces), or None."""

needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run on this machine: {BWRAP_PROBLEM}"
)
BACKENDS = [pytest.param("bwrap", marks=needs_bwrap), "local"]
"""The built-in backends, for tests that hold for both."""


async def open_sandbox(
    root: Path, config: SandboxConfig | None = None, *, sandbox_id: str = "wrun_test"
) -> HostSandbox:
    """A prepared sandbox in `root` (a `Workspaces` of its own)."""
    return await Workspaces(root).open(sandbox_id, SandboxSpec(config=config or define_sandbox()))
