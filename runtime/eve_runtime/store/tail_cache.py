"""The newest event lines of recently written sessions, kept in memory for the streams that read them.

A client mostly streams the session it is talking to, right after the commits that wrote the
events; serving those lines from memory spares the stream a read of the database (and a hop to its
reader thread) per chunk. The cache holds only acknowledged commits' events, at their indexes: an
event log is append-only and an index is never written twice, so a cached line can never go stale.
Anything it does not hold is read from the database as before. It is bounded by bytes: the least
recently written or read sessions go first, and a session longer than the whole budget keeps only
its newest lines.

Everything runs on the store's event loop.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from eve_runtime.store.event_log import EventRow, LineChunk

__all__ = ["DEFAULT_TAIL_CACHE_BYTES", "TailCache"]

DEFAULT_TAIL_CACHE_BYTES = 8 * 1024 * 1024
"""The default budget: about 40,000 streamed-reply events of 200 bytes."""

_PER_LINE = 64
"""What a cached line costs beyond its bytes (its object header and two list slots), roughly."""


class _Tail:
    __slots__ = ("first", "lines", "size", "types")

    def __init__(self, first: int) -> None:
        self.first = first
        self.lines: list[bytes] = []
        self.types: list[str] = []
        self.size = 0


class TailCache:
    """The newest committed lines of recently written sessions, within `max_bytes` (0: none)."""

    def __init__(self, max_bytes: int = DEFAULT_TAIL_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._tails: OrderedDict[str, _Tail] = OrderedDict()
        self._size = 0

    @property
    def size(self) -> int:
        """The bytes held now (as counted against `max_bytes`)."""
        return self._size

    def add(self, session_id: str, rows: Sequence[EventRow]) -> None:
        """Keep the events of an acknowledged commit (consecutive indexes, in order)."""
        if not rows or self.max_bytes <= 0:
            return
        tail = self._tails.pop(session_id, None)
        if tail is not None and rows[0].index != tail.first + len(tail.lines):
            self._size -= tail.size  # not the continuation of what is held: start again from here
            tail = None
        if tail is None:
            tail = _Tail(rows[0].index)
        self._tails[session_id] = tail
        added = 0
        for row in rows:
            line = bytes(row.line)
            tail.lines.append(line)
            tail.types.append(row.type)
            added += len(line) + _PER_LINE
        tail.size += added
        self._size += added
        self._shrink(session_id)

    def count(self, session_id: str) -> int | None:
        """The session's event count, when its newest lines are held (this process writes its log), else None."""
        tail = self._tails.get(session_id)
        return None if tail is None else tail.first + len(tail.lines)

    def chunk(self, session_id: str, start: int, end: int, stop_after: frozenset[str]) -> LineChunk | None:
        """The held lines from `start` as a chunk (see `Store.read_chunk`), or None when `start` is not held.

        The chunk ends where the held lines end, even before `end`.
        """
        tail = self._tails.get(session_id)
        if tail is None or not tail.first <= start < tail.first + len(tail.lines):
            return None
        self._tails.move_to_end(session_id)
        low = start - tail.first
        high = min(end, tail.first + len(tail.lines)) - tail.first
        stopped = False
        if stop_after and high > low:
            for offset, kind in enumerate(tail.types[low:high]):
                if kind in stop_after:
                    high, stopped = low + offset + 1, True
                    break
        if high <= low:
            return LineChunk(0, b"")
        lines = tail.lines[low:high]
        lines.append(b"")  # one join, and the last line's newline comes with it
        return LineChunk(high - low, b"\n".join(lines), stopped=stopped)

    def clear(self) -> None:
        """Drop everything."""
        self._tails.clear()
        self._size = 0

    def _shrink(self, keep: str) -> None:
        while self._size > self.max_bytes and len(self._tails) > 1:
            _oldest, tail = self._tails.popitem(last=False)  # never `keep`: it was just made the newest
            self._size -= tail.size
        if self._size <= self.max_bytes:
            return
        tail = self._tails[keep]
        # One session over the whole budget: drop its oldest lines, down to three quarters of it
        # (so the next commits do not each pay for a trim).
        target = self.max_bytes * 3 // 4
        dropped = drop = 0
        while drop < len(tail.lines) and self._size - dropped > target:
            dropped += len(tail.lines[drop]) + _PER_LINE
            drop += 1
        del tail.lines[:drop]
        del tail.types[:drop]
        tail.first += drop
        tail.size -= dropped
        self._size -= dropped
        if not tail.lines:
            del self._tails[keep]
