"""Whether a server records spans, and its telemetry, read from the environment (`OTEL_*`).

Spans are recorded when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
`OTEL_EXPORTER_OTLP_ENDPOINT`) or `eve dev --trace` asks for its trees, unless
`OTEL_SDK_DISABLED=true`; `OTEL_TRACES_EXPORTER=none` turns the OTLP export off. Nothing here
loads the OpenTelemetry SDK unless telemetry is on. The OTLP exporter
(`opentelemetry-exporter-otlp-proto-http`) reads the standard `OTEL_EXPORTER_OTLP_*` variables
itself: endpoint, headers, timeout, compression, certificates.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eve_runtime.telemetry.provider import Telemetry

__all__ = ["TREES", "otlp_endpoint", "server_telemetry", "telemetry_from_environment", "wanted"]

logger = logging.getLogger("eve.telemetry")

TREES = "eve.trace"
"""The logger `eve dev --trace`'s turn trees are printed through."""


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


def telemetry_from_environment(
    environ: Mapping[str, str] | None = None,
    *,
    service_name: str = "eve",
    console: Callable[[str], None] | None = None,
) -> Telemetry | None:
    """The telemetry a server runs with, or None (off, the default).

    OTLP when `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` is set, and `eve dev --trace`'s compact trees
    when `console` receives them; off with neither, or with `OTEL_SDK_DISABLED=true` or
    `OTEL_TRACES_EXPORTER=none`.
    """
    environ = os.environ if environ is None else environ
    if not wanted(environ, trace=console is not None):
        return None
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter

    from eve_runtime.telemetry.provider import Telemetry

    endpoint = otlp_endpoint(environ)
    exporters: dict[str, SpanExporter] = {}
    if endpoint is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # the exporter logs every failed attempt itself; GuardedExporter says it once instead
        logging.getLogger("opentelemetry.exporter.otlp.proto.http").setLevel(logging.CRITICAL)
        exporters[f"OTLP {endpoint}"] = OTLPSpanExporter()
    processors: list[SpanProcessor] = []
    if console is not None:
        from eve_runtime.telemetry.console import TurnTrees

        processors.append(TurnTrees(console))
    return Telemetry.start(exporters, processors=processors, service_name=service_name)


def server_telemetry(trace: bool, service_name: str) -> Telemetry | None:
    """A server's telemetry, or None (off): the SDK is loaded only when it is on.

    With `trace`, each turn's tree is logged by logger `eve.trace`: on stderr under `eve dev
    --no-ui`; beside the terminal UI, in the dev log and above the prompt (`eve_cli.tui.span_trees`).
    """
    if not wanted(os.environ, trace=trace):
        return None
    console = logging.getLogger(TREES).info if trace else None
    telemetry = telemetry_from_environment(service_name=service_name, console=console)
    if telemetry is not None:
        logger.info("telemetry on: spans go to %s", ", ".join(telemetry.names))
    return telemetry
