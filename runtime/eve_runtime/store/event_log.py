"""The records of a session's event log: one stored event, and a chunk of stored lines for a stream."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EventRow", "LineChunk"]


@dataclass(frozen=True)
class EventRow:
    """One stored event."""

    index: int
    """Absolute position in the session's log, from 0."""
    type: str
    line: bytes
    """The event serialized as one NDJSON line (UTF-8, no trailing newline)."""


@dataclass(frozen=True, slots=True)
class LineChunk:
    """Consecutive events' stored lines as one NDJSON chunk: what a stream sends as is."""

    count: int
    """How many events the chunk holds (from the index asked for)."""
    body: bytes
    """Their lines in index order, each followed by `\\n` (empty when `count` is 0)."""
    stopped: bool = False
    """The last event's type is one of the `stop_after` types asked for."""
