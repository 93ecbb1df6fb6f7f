"""`transcript_of()` for client code: the same function the server side uses (`eve_runtime.events.transcript`)."""

from __future__ import annotations

from eve_runtime.events.transcript import TranscriptMessage, transcript_of

__all__ = ["TranscriptMessage", "transcript_of"]
