"""Span ids eve minted itself, adopted by the spans that record them.

The SDK draws every new span's id from its provider's id generator. eve's generator draws random
ids too, except while [`AdoptedIds.adopt`][eve_runtime.telemetry.adopted.AdoptedIds.adopt] names the
next span's: a turn's span, recorded when the turn ends, gets the id `turn.started` reported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

__all__ = ["AdoptedIds"]

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
