"""Whether telemetry is on, read from the environment without loading the OpenTelemetry SDK.

Spans are recorded when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
`OTEL_EXPORTER_OTLP_ENDPOINT`) or `eve dev --trace` asks for its trees, unless
`OTEL_SDK_DISABLED=true`. `OTEL_TRACES_EXPORTER=none` turns the OTLP export off.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["otlp_endpoint", "wanted"]


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
