"""Identifiers: session ids (`wrun_` + ULID, as eve), event ids (`evt_` + ULID) and delivery ids (UUID)."""

from __future__ import annotations

import re
import uuid

from ulid import ULID

__all__ = ["SESSION_ID_PATTERN", "is_session_id", "new_delivery_id", "new_event_id", "new_session_id"]

SESSION_ID_PATTERN = re.compile(r"^wrun_[0-9A-HJKMNP-TV-Z]{26}$")


def new_session_id() -> str:
    """A new session id."""
    return f"wrun_{ULID()}"


def new_event_id() -> str:
    """A new event id: minted once when an event is written, stored with it."""
    return f"evt_{ULID()}"


def new_delivery_id() -> str:
    """A new delivery id."""
    return str(uuid.uuid4())


def is_session_id(value: str) -> bool:
    """Whether `value` has the shape of a session id (it may still not exist)."""
    return SESSION_ID_PATTERN.match(value) is not None
