"""The process's OpenTelemetry SDK: a tracer provider of eve's own, its exporters, and failure isolation.

Imported only when telemetry is on (an OTLP endpoint in the environment, `eve dev --trace`, or a
test's in-memory exporter), so `eve --help` and a telemetry-off server never load the SDK.

- The provider adopts the ids eve already minted and stored (`eve_runtime.telemetry.ids`): a
  turn's span, recorded when the turn ends (maybe in another process, days after it started),
  gets the span id its `turn.started` event reported (`eve_runtime.telemetry.spans.AdoptedIds`).
- Spans go through a `BatchSpanProcessor` (export runs on its own thread; a full queue drops
  spans, it never blocks a turn), and every exporter is wrapped so that its failures are
  swallowed and logged once ([`GuardedExporter`][eve_runtime.telemetry.provider.GuardedExporter]).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Tracer

from eve_runtime._version import __version__
from eve_runtime.telemetry.spans import AdoptedIds, SpanBuilder

if TYPE_CHECKING:
    from eve_runtime.telemetry.recorder import Event, RecorderState

__all__ = ["GuardedExporter", "Telemetry"]

logger = logging.getLogger("eve.telemetry")


class GuardedExporter(SpanExporter):
    """An exporter whose failures never reach the caller: logged once (and once more when it recovers)."""

    def __init__(self, inner: SpanExporter, name: str) -> None:
        self.inner = inner
        self.name = name
        self._failing = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter bug or a transport error: never the turn's problem
            self._failed(f"{type(exc).__name__}: {exc}")
            return SpanExportResult.FAILURE
        if result is SpanExportResult.FAILURE:
            self._failed("the exporter reported a failure")
        elif self._failing:
            self._failing = False
            logger.info("telemetry: exporting to %s works again", self.name)
        return result

    def _failed(self, why: str) -> None:
        if not self._failing:
            self._failing = True
            logger.warning(
                "telemetry: could not export spans to %s (%s); spans are dropped until it answers, "
                "turns are unaffected",
                self.name,
                why,
            )

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        try:
            return self.inner.force_flush(timeout_millis)
        except Exception:
            return False

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.inner.shutdown()


class Telemetry:
    """eve's OpenTelemetry: a tracer provider with its exporters, and a recorder for each session actor."""

    def __init__(self, provider: TracerProvider, *, names: Sequence[str] = ()) -> None:
        self.provider = provider
        self.tracer: Tracer = provider.get_tracer("eve", __version__)
        self.spans = SpanBuilder(self.tracer)
        """Makes the SDK spans of what the recorders collect, off the turns' path."""
        self.names = tuple(names)
        """Where spans go (for the log line saying telemetry is on)."""

    @classmethod
    def start(
        cls,
        exporters: Mapping[str, SpanExporter] | None = None,
        *,
        processors: Sequence[SpanProcessor] = (),
        batch: bool = True,
        service_name: str = "eve",
    ) -> Telemetry:
        """A provider exporting to `exporters` (by name, for the logs) and feeding `processors`.

        `batch=False` exports each span as it ends (tests); the default batches on a thread.
        `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` win over `service_name`.
        """
        attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service_name}
        resource = Resource.create({**attributes, "service.version": __version__})
        provider = TracerProvider(resource=resource, id_generator=AdoptedIds(), shutdown_on_exit=False)
        for name, exporter in (exporters or {}).items():
            guarded = GuardedExporter(exporter, name)
            provider.add_span_processor(BatchSpanProcessor(guarded) if batch else SimpleSpanProcessor(guarded))
        for processor in processors:
            provider.add_span_processor(processor)
        return cls(provider, names=[*(exporters or {}), *(type(p).__name__ for p in processors)])

    def recorder(self, session_id: str, state: RecorderState, agent_name: Callable[[], str]) -> Callable[[Event], None]:
        """What a session's emitter tells each event: it records the session's spans."""
        from eve_runtime.telemetry.recorder import SessionRecorder

        return SessionRecorder(self.spans, session_id, state, agent_name)

    def force_flush(self, timeout: float = 5.0) -> bool:
        """Export what is queued now (tests, `eve dev` before it prints); False when it took too long."""
        return self.spans.drain(timeout) and self.provider.force_flush(int(timeout * 1000))

    def shutdown(self, timeout: float = 2.0) -> None:
        """Flush and stop the exporters, waiting at most `timeout` seconds (a hanging endpoint never holds eve up)."""

        def stop() -> None:
            self.spans.stop(timeout)
            self.provider.shutdown()

        done = threading.Thread(target=stop, name="eve-telemetry-shutdown", daemon=True)
        done.start()
        done.join(timeout)
        if done.is_alive():
            logger.warning("telemetry: the exporters did not stop within %gs; their last spans may be lost", timeout)
