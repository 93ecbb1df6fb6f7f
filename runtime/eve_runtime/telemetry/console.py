"""`eve dev --trace`: a compact tree of each turn's spans, printed when the turn ends.

A span processor beside the exporters: it keeps the spans that ended, and when a turn's span
(`invoke_agent NAME`) ends, prints that turn's tree (the session span above the session's first
turn) with each span's duration, token counts and finish reason, then forgets them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

__all__ = ["TurnTrees", "render_tree"]

MAX_SPANS = 10_000
"""Spans kept while waiting for their turn to end; the oldest traces are forgotten beyond it."""


def _duration(span: ReadableSpan) -> str:
    if span.start_time is None or span.end_time is None:
        return "?"
    seconds = (span.end_time - span.start_time) / 1e9
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _label(span: ReadableSpan) -> str:
    attributes = span.attributes or {}
    name = span.name
    if name == "agent.step":
        name = f"agent.step #{attributes.get('agent.step.index', '?')}"
    details = [_duration(span)]
    if "gen_ai.usage.input_tokens" in attributes:
        tokens_in, tokens_out = attributes["gen_ai.usage.input_tokens"], attributes.get("gen_ai.usage.output_tokens")
        details.append(f"in {tokens_in!s} · out {tokens_out!s} tokens")
    if "gen_ai.usage.cost" in attributes:
        details.append(f"${attributes['gen_ai.usage.cost']!s}")
    reasons = attributes.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, tuple | list) and reasons:
        details.append(str(reasons[0]))
    outcome = attributes.get("agent.turn.outcome") or attributes.get("agent.action.outcome")
    if outcome is not None and outcome not in ("completed", "succeeded"):
        details.append(str(outcome))
    if not span.status.is_ok:
        details.append(f"error: {span.status.description or 'failed'}")
    return f"{name}  {' · '.join(details)}"


def render_tree(root: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    """The lines of `root`'s tree among `spans` (children by start time)."""
    children: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        if span.parent is not None:
            children.setdefault(span.parent.span_id, []).append(span)
    lines: list[str] = []

    def walk(span: ReadableSpan, prefix: str, last: bool, top: bool) -> None:
        lines.append(_label(span) if top else f"{prefix}{'└── ' if last else '├── '}{_label(span)}")
        below = sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time or 0)
        inner = "" if top else prefix + ("    " if last else "│   ")
        for index, child in enumerate(below):
            walk(child, inner, index == len(below) - 1, False)

    walk(root, "", True, True)
    return lines


class TurnTrees(SpanProcessor):
    """Prints each turn's tree through `sink` (one string, many lines) when the turn's span ends."""

    def __init__(self, sink: Callable[[str], None]) -> None:
        self.sink = sink
        self._traces: OrderedDict[int, list[ReadableSpan]] = OrderedDict()
        self._count = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        trace_id = span.context.trace_id
        kept = self._traces.setdefault(trace_id, [])
        kept.append(span)
        self._count += 1
        while self._count > MAX_SPANS and self._traces:
            _, dropped = self._traces.popitem(last=False)
            self._count -= len(dropped)
        attributes = span.attributes or {}
        if not span.name.startswith("invoke_agent ") or "agent.turn.id" not in attributes:
            return
        root = span
        if span.parent is not None:  # the session's first turn: its session span ended just before it
            root = next((s for s in kept if s.context.span_id == span.parent.span_id), span)
        lines = render_tree(root, kept)
        header = (
            f"trace {span.context.trace_id:032x} · {attributes.get('gen_ai.agent.name')} "
            f"{attributes.get('agent.turn.id')} · {attributes.get('agent.turn.outcome')}"
        )
        shown = {id(s) for s in kept if _label(s) and _within(s, root, kept)}
        remaining = [s for s in kept if id(s) not in shown]
        self._count -= len(kept) - len(remaining)
        if remaining:
            self._traces[trace_id] = remaining
        else:
            self._traces.pop(trace_id, None)
        self.sink("\n".join([header, *lines]))

    def shutdown(self) -> None:
        self._traces.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _within(span: ReadableSpan, root: ReadableSpan, spans: list[ReadableSpan]) -> bool:
    by_id = {s.context.span_id: s for s in spans}
    current: ReadableSpan | None = span
    while current is not None:
        if current.context.span_id == root.context.span_id:
            return True
        current = by_id.get(current.parent.span_id) if current.parent is not None else None
    return False
