"""Spans as the recorder collects them, and the thread that turns them into the SDK's spans.

On a turn's path a span is a few fields in a [`PendingSpan`][eve_runtime.telemetry.spans.PendingSpan]
(its ids drawn here, its times read from the clock); when it ends it is queued, and one thread
per process ([`SpanBuilder`][eve_runtime.telemetry.spans.SpanBuilder]) makes the SDK spans of what
was queued, every `INTERVAL` seconds, with those very ids and times, and hands them to the
processors. So the SDK's work (sampling, attribute checks, the processors) never runs on a
turn's path. Nothing wakes the thread per span: waking it would hand it the GIL in the middle of
a step.

The SDK draws a new span's id from its provider's id generator; eve's
([`AdoptedIds`][eve_runtime.telemetry.spans.AdoptedIds]) draws random ids too, except while the
builder names the next span's: the span gets the id eve minted (a turn's span, the id its
`turn.started` event reported).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import random
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags, Tracer

__all__ = ["AdoptedIds", "PendingSpan", "SpanBuilder", "new_span_id"]

logger = logging.getLogger("eve.telemetry")

_SPAN_ID: ContextVar[int | None] = ContextVar("eve_adopted_span_id", default=None)
_TRACE_ID: ContextVar[int | None] = ContextVar("eve_adopted_trace_id", default=None)


class AdoptedIds(RandomIdGenerator):
    """Random ids, except while `adopt` names the next span's (see the module docstring)."""

    def generate_span_id(self) -> int:
        adopted = _SPAN_ID.get()
        return adopted if adopted is not None else super().generate_span_id()

    def generate_trace_id(self) -> int:
        adopted = _TRACE_ID.get()
        return adopted if adopted is not None else super().generate_trace_id()

    @staticmethod
    @contextlib.contextmanager
    def adopt(span_id: int, trace_id: int | None = None) -> Iterator[None]:
        """Spans started inside get `span_id` (and `trace_id` when they are a trace's root)."""
        span = _SPAN_ID.set(span_id)
        trace = _TRACE_ID.set(trace_id)
        try:
            yield
        finally:
            _SPAN_ID.reset(span)
            _TRACE_ID.reset(trace)


def new_span_id() -> int:
    """A random, valid (non-zero) 64-bit span id."""
    return random.getrandbits(64) or 1


@dataclass(slots=True)
class PendingSpan:
    """A span being recorded: everything the SDK span will be made of."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    """The parent span (None: the trace's root)."""
    start: int
    """Epoch nanoseconds."""
    attributes: dict[str, Any]
    kind: SpanKind = SpanKind.INTERNAL
    flags: int = 1
    end: int = 0
    links: list[tuple[int, int, dict[str, str]]] | None = None
    """`(trace_id, span_id, attributes)` of linked spans."""
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None


INTERVAL = 0.2
"""Seconds between two rounds of the builder thread."""
MAX_QUEUED = 8192
"""Spans waiting for the thread beyond which new ones are dropped (the thread fell behind)."""


class SpanBuilder:
    """Makes the SDK spans of queued pending spans, on a thread of its own (started on first use)."""

    def __init__(self, tracer: Tracer, *, interval: float = INTERVAL) -> None:
        self.tracer = tracer
        self.interval = interval
        self._queue: collections.deque[PendingSpan] = collections.deque()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._round = threading.Condition()
        self._rounds = 0
        self._stopping = False
        self._failed = False

    def submit(self, span: PendingSpan) -> None:
        """Queue an ended span (cheap: never blocks, never raises, wakes nothing)."""
        if len(self._queue) >= MAX_QUEUED:
            if not self._failed:
                self._failed = True
                logger.warning("telemetry: spans are made slower than they come; dropping some")
            return
        self._queue.append(span)
        if self._thread is None:
            self._start()

    def drain(self, timeout: float) -> bool:
        """Make every span queued so far now (False if that took longer than `timeout`)."""
        if self._thread is None:
            return True
        with self._round:
            target = self._rounds + 2  # a round that started before the call may have missed the last spans
            self._wake.set()
            return self._round.wait_for(lambda: self._rounds >= target or not self._thread, timeout)

    def stop(self, timeout: float) -> None:
        """Make what is queued, then end the thread (waiting at most `timeout` seconds)."""
        thread = self._thread
        if thread is not None:
            self._stopping = True
            self._wake.set()
            thread.join(timeout)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="eve-telemetry-spans", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            self._wake.clear()
            queued = self._queue
            while queued:
                try:
                    self._make(queued.popleft())
                except Exception:  # a processor's bug: logged once, the next spans still go out
                    if not self._failed:
                        self._failed = True
                        logger.warning("telemetry: a span could not be recorded", exc_info=True)
            with self._round:
                self._rounds += 1
                self._round.notify_all()
            if self._stopping:
                return

    def _make(self, pending: PendingSpan) -> None:
        flags = TraceFlags(pending.flags)
        if pending.parent_id is None:
            parent = Context()
        else:
            remote = SpanContext(pending.trace_id, pending.parent_id, True, flags)
            parent = trace.set_span_in_context(NonRecordingSpan(remote), Context())
        links = None
        if pending.links:
            links = [Link(SpanContext(t, s, True, flags), attributes) for t, s, attributes in pending.links]
        with AdoptedIds.adopt(pending.span_id, pending.trace_id if pending.parent_id is None else None):
            span = self.tracer.start_span(
                pending.name, parent, pending.kind, pending.attributes, links, pending.start, record_exception=False
            )
        for name, at, attributes in pending.events:
            span.add_event(name, attributes, at)
        if pending.error is not None:
            span.set_status(Status(StatusCode.ERROR, pending.error))
        span.end(pending.end or None)
