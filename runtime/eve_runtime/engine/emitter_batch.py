"""What a session's emitter holds until its next write: pending events and attached state changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eve_runtime.events.catalog import DELTA_FIELDS, EventType

__all__ = ["Attachment", "PendingEvent"]


@dataclass
class PendingEvent:
    """An event emitted and not written yet (a delta may still absorb the next one of its kind)."""

    type: EventType
    data: dict[str, Any]
    delivery_ids: tuple[str, ...]
    at: str
    sealed: bool = False
    """A checkpoint was attached after this event: nothing may merge into it any more."""

    def absorbs(self, event_type: EventType, data: dict[str, Any], delivery_ids: tuple[str, ...]) -> bool:
        """Whether `data` can merge into this delta: same kind and coordinates, and no checkpoint after it."""
        field = DELTA_FIELDS.get(event_type)
        if self.sealed or field is None or event_type != self.type or delivery_ids != self.delivery_ids:
            return False
        return all(self.data.get(k) == v for k, v in data.items() if k != field)


@dataclass
class Attachment:
    """State changes queued for the next write, with the events emitted before them."""

    history: list[str] = field(default_factory=list)
    consumed: list[str] = field(default_factory=list)
    checkpoint: str | None = None

    def __bool__(self) -> bool:
        return bool(self.history or self.consumed or self.checkpoint)
