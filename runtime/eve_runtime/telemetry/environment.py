"""Whether telemetry is on, read from the environment without loading the OpenTelemetry SDK.

Spans are recorded when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
`OTEL_EXPORTER_OTLP_ENDPOINT`) or `eve dev --trace` asks for its trees, unless
`OTEL_SDK_DISABLED=true`. `OTEL_TRACES_EXPORTER=none` turns the OTLP export off.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eve_runtime.telemetry.provider import Telemetry

__all__ = ["otlp_endpoint", "server_telemetry", "wanted"]

logger = logging.getLogger("eve.telemetry")


def otlp_endpoint(environ: Mapping[str, str]) -> str | None:
    """The OTLP endpoint spans are exported to, if one is configured (and not turned off)."""
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def wanted(environ: Mapping[str, str], *, trace: bool = False) -> bool:
    """Whether a server records spans: an OTLP endpoint, or `trace` (`eve dev --trace`), and the SDK not disabled."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return trace or otlp_endpoint(environ) is not None


def server_telemetry(trace: bool, service_name: str) -> Telemetry | None:
    """A server's telemetry, or None (off): the SDK is loaded only when it is on.

    With `trace`, each turn's tree is logged by logger `eve.trace` (on stderr under `eve dev
    --no-ui`, in the dev log beside the terminal UI).
    """
    if not wanted(os.environ, trace=trace):
        return None
    from eve_runtime.telemetry.provider import telemetry_from_environment

    console = logging.getLogger("eve.trace").info if trace else None
    telemetry = telemetry_from_environment(service_name=service_name, console=console)
    if telemetry is not None:
        logger.info("telemetry on: spans go to %s", ", ".join(telemetry.names))
    return telemetry
