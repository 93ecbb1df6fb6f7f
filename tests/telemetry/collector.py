"""A stand-in OTLP/HTTP collector for tests: decodes the protobuf bodies posted to `/v1/traces`.

`hang=True` accepts requests and never answers (an endpoint that is slow forever).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

__all__ = ["Collector", "ReceivedSpan", "collector"]


@dataclass(frozen=True)
class ReceivedSpan:
    """A span as the collector received it."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    service: str


@dataclass
class Collector:
    """What the stand-in received."""

    url: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    received: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[ReceivedSpan]:
        """Wait until `count` spans arrived (a condition, not a sleep); all spans then."""
        with self.received:
            self.received.wait_for(lambda: len(self.spans) >= count, timeout)
            return list(self.spans)


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@contextmanager
def collector(*, hang: bool = False) -> Iterator[Collector]:
    """A collector on 127.0.0.1 (a free port), in a thread, for the `with` block."""
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if hang:
                release.wait(30)
                return
            request = ExportTraceServiceRequest.FromString(body)
            spans = []
            for resource in request.resource_spans:
                attributes = {a.key: _value(a.value) for a in resource.resource.attributes}
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        spans.append(
                            ReceivedSpan(
                                span.name,
                                span.trace_id.hex(),
                                span.span_id.hex(),
                                span.parent_span_id.hex(),
                                {a.key: _value(a.value) for a in span.attributes},
                                str(attributes.get("service.name")),
                            )
                        )
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            with state.received:
                state.requests += 1
                state.spans.extend(spans)
                state.received.notify_all()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state = Collector(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, name="otlp-collector", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        release.set()
        server.shutdown()
        server.server_close()
