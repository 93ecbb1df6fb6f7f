"""Step overhead with telemetry on (spans exported over OTLP to an in-process collector) against off.

Measured: two local worlds of the template app with the offline `test` model, in the same run and
interleaved round by round (which world goes first alternates): one with telemetry off (no SDK
provider, the default), one recording every span (session, turn, step, model call, tool call)
and exporting them with the standard OTLP/HTTP exporter through a `BatchSpanProcessor` to a
collector stand-in listening on 127.0.0.1 in this process (it reads each request and answers 200,
as a collector would; decoding is the collector's work, not eve's, and is not done here). A turn
is timed from `Runtime.deliver` until its `session.waiting` commit is durable; echo turns have one
step, tool turns (`/call get_weather`) two, reported per step.

Target (DESIGN.md): the step overhead with telemetry on within 1.2x of telemetry off: the median of
each round's on/off ratio (the two turns of a round ran back to back, under the same load; the
machine is shared and its load swings more between rounds than telemetry costs).
Also printed: the spans the collector received (every span of every turn reaches it).

Run: `.venv/bin/python bench/telemetry_overhead.py [rounds] [warmup]`
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import TOOL_TURN, local_world, median, percentile, verdict
from bench.step_overhead import _timed_turn
from eve_runtime.serving import event_loop

TARGET_RATIO = 1.2
SPANS_PER_ECHO_TURN = 3  # turn, step, model call (the session's own span comes with its first turn)
SPANS_PER_TOOL_TURN = 6  # turn, two steps, two model calls, the tool call


class _Received:
    def __init__(self) -> None:
        self.requests = 0
        self.bytes = 0
        self.lock = threading.Lock()


@contextmanager
def collector() -> Iterator[tuple[str, _Received]]:
    """An OTLP/HTTP endpoint on 127.0.0.1 in a thread: reads each export and answers 200."""
    received = _Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with received.lock:
                received.requests += 1
                received.bytes += len(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="bench-otlp-collector", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", received
    finally:
        server.shutdown()
        server.server_close()


def _counting(inner: Any) -> Any:
    """The exporter, counting the spans that reach it."""
    from opentelemetry.sdk.trace.export import SpanExporter

    class Counting(SpanExporter):
        spans = 0

        def export(self, spans: Any) -> Any:
            result = inner.export(spans)
            Counting.spans += len(spans)
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(inner.force_flush(timeout_millis))

    return Counting()


async def measure(rounds: int, warmup: int) -> dict[str, Any]:
    """`warmup` untimed then `rounds` timed rounds of (echo turn, tool turn) in each world, interleaved."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from eve_runtime.sessions.runtime import RuntimeOptions
    from eve_runtime.telemetry.provider import Telemetry

    with collector() as (url, received):
        counting = _counting(OTLPSpanExporter(endpoint=url))
        telemetry = Telemetry.start({"otlp": counting}, service_name="bench")
        samples: dict[str, list[float]] = {"off_echo": [], "on_echo": [], "off_tool": [], "on_tool": []}
        async with (
            local_world("telemetry-off") as off,
            local_world("telemetry-on", options=RuntimeOptions(telemetry=telemetry)) as on,
        ):
            worlds = {
                "off": (off, await off.create(), await off.create()),
                "on": (on, await on.create(), await on.create()),
            }
            for index in range(warmup + rounds):
                order = ("off", "on") if index % 2 == 0 else ("on", "off")
                for name in order:
                    world, echo, tool = worlds[name]
                    echo_time, *_ = await _timed_turn(world, echo, f"hello {index}")
                    tool_time, *_ = await _timed_turn(world, tool, TOOL_TURN)
                    if index >= warmup:
                        samples[f"{name}_echo"].append(echo_time)
                        samples[f"{name}_tool"].append(tool_time / 2)
            completed = {
                name: [world.store.boundaries.get(s, 0) for s in (echo, tool)]
                for name, (world, echo, tool) in worlds.items()
            }
            failures = off.store.failures + on.store.failures
        telemetry.shutdown(timeout=10)
    figures: dict[str, Any] = {
        "rounds": rounds,
        "turns_completed": completed,
        "expected_turns": warmup + rounds,
        "failed_turns": failures,
        "spans_exported": counting.spans,
        "spans_expected": 2 + (warmup + rounds) * (SPANS_PER_ECHO_TURN + SPANS_PER_TOOL_TURN),
        "export_requests": received.requests,
    }
    for key, values in samples.items():
        figures[f"{key}_ms"] = {"median": median(values) * 1000, "p90": percentile(values, 90) * 1000}
    for kind in ("echo", "tool"):
        # the median of the rounds' own ratios: each round's two turns ran side by side, under the same load
        paired = [on / off for on, off in zip(samples[f"on_{kind}"], samples[f"off_{kind}"], strict=True)]
        figures[f"{kind}_ratio"] = median(paired)
        figures[f"{kind}_ratio_of_medians"] = figures[f"on_{kind}_ms"]["median"] / figures[f"off_{kind}_ms"]["median"]
    return figures


def run(rounds: int = 200, warmup: int = 20) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(rounds, warmup))


def report(figures: dict[str, Any]) -> None:
    print(
        f"telemetry overhead, {figures['rounds']} interleaved rounds "
        f"(target: step overhead with spans exported within {TARGET_RATIO}x of telemetry off)"
    )
    if figures["failed_turns"]:
        print(f"  WARNING: {figures['failed_turns']} turns failed: the figures below are not those of working turns")
    print(f"  {'median per step':<30} {'off':>9} {'on':>9}  on/off (median of the rounds' own ratios)")
    for label, kind in (("echo turn, per step (1 step)", "echo"), ("tool turn, per step (2 steps)", "tool")):
        off, on, ratio = (
            figures[f"off_{kind}_ms"]["median"],
            figures[f"on_{kind}_ms"]["median"],
            figures[f"{kind}_ratio"],
        )
        print(f"  {label:<30} {off:7.3f}ms {on:7.3f}ms  {ratio:6.2f}x  {verdict(ratio <= TARGET_RATIO)}")
    print(
        f"  ratio of the medians instead: echo {figures['echo_ratio_of_medians']:.2f}x, "
        f"tool {figures['tool_ratio_of_medians']:.2f}x"
    )
    print(
        f"  spans exported: {figures['spans_exported']} of {figures['spans_expected']} "
        f"in {figures['export_requests']} OTLP requests"
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    report(run(rounds, warmup))


if __name__ == "__main__":
    main()
