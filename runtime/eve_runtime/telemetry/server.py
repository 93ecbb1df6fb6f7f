"""A server's telemetry: on when the environment (or `eve dev --trace`) asks for it, else nothing loaded."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from eve_runtime.telemetry.environment import wanted

if TYPE_CHECKING:
    from eve_runtime.telemetry.provider import Telemetry

__all__ = ["TREES", "server_telemetry"]

logger = logging.getLogger("eve.telemetry")

TREES = "eve.trace"
"""The logger `eve dev --trace`'s turn trees are printed through."""


def server_telemetry(trace: bool, service_name: str) -> Telemetry | None:
    """A server's telemetry, or None (off): the SDK is loaded only when it is on.

    With `trace`, each turn's tree is logged by logger `eve.trace`: on stderr under `eve dev
    --no-ui`; beside the terminal UI, in the dev log and above the prompt (`eve_cli.tui.span_trees`).
    """
    if not wanted(os.environ, trace=trace):
        return None
    from eve_runtime.telemetry.provider import telemetry_from_environment

    console = logging.getLogger(TREES).info if trace else None
    telemetry = telemetry_from_environment(service_name=service_name, console=console)
    if telemetry is not None:
        logger.info("telemetry on: spans go to %s", ", ".join(telemetry.names))
    return telemetry
