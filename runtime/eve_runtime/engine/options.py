"""The runtime's tunables: retries, delays, timeouts, caches, and whether sessions are leased.

Defaults fit production; tests shorten the delays and put a virtual clock in. Re-exported by
`eve_runtime.sessions.runtime`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eve_runtime.telemetry.provider import Telemetry

from eve_runtime.engine.tool_stubs import ToolStubBook

__all__ = ["RuntimeOptions"]


@dataclass
class RuntimeOptions:
    """Tunables of the engine (tests shorten the delays)."""

    provider_attempts: int = 4
    """Model-call attempts inside one step for provider errors a retry may cure (429, 5xx, timeouts, resets)."""
    provider_backoff: float = 0.5
    """Seconds before the first provider retry; doubles each time (give or take a fifth)."""
    step_attempts: int = 4
    """Attempts of one step before `STEP_FAILED`."""
    step_retry_delay: float = 0.5
    max_interruptions: int = 3
    """A turn interrupted more often than this fails with `STEP_INTERRUPTED`."""
    tool_threads: int = 32
    flush_linger: float = 0.002
    """Seconds a background write waits for more events (a fast model's step then takes one write)."""
    hook_timeout: float = 30.0
    """Seconds one hook handler may take before it is logged and no longer waited for."""
    reset_timeout: float = 30.0
    """Seconds a reset waits for the session to end before returning anyway (it stays queued and is applied)."""
    cached_sessions: int = 256
    """Recently active sessions kept loaded, so a conversation's next turn does not re-read its history."""
    clock: Callable[[], float] = field(default=time.time)
    lease_seconds: float | None = None
    """Many processes share the store (the Postgres world): a session runs only in the process holding
    its lease, which lasts this long unrenewed (see `eve_runtime.sessions.ownership`). None: one process owns
    the store (the local world), no leases."""
    deadline_sweep_seconds: float = 5.0
    """With leases: how often this process asks the store for sessions past their deadline that no
    process holds (their owner died before timing them out), and wakes them. Bounds how late such a
    timeout fires."""
    sandbox_root: Path | None = None
    """Where workspaces live; None: `.eve/sandboxes/` under the app root (see `eve_runtime.sessions.sandboxes`)."""
    tool_stubs: ToolStubBook = field(default_factory=ToolStubBook)
    """The eval tool stubs of this runtime's sessions (state, not a tunable: kept in memory for the process's life)."""
    telemetry: Telemetry | None = None
    """Where sessions record their spans (`eve_runtime.telemetry`); None (the default): no spans, ids only."""
