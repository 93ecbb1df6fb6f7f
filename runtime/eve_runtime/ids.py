"""Identifiers: session ids (`wrun_` + ULID, as eve), event ids (`evt_` + ULID) and delivery ids (UUID)."""

from __future__ import annotations

import os
import re
import time
import uuid

__all__ = ["SESSION_ID_PATTERN", "is_session_id", "new_delivery_id", "new_event_id", "new_session_id"]

SESSION_ID_PATTERN = re.compile(r"^wrun_[0-9A-HJKMNP-TV-Z]{26}$")


_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base32, as ULID spells it
_PAIRS = [first + second for first in _ALPHABET for second in _ALPHABET]  # 10 bits -> 2 characters
_RANDOM_BITS = 80


class _UlidMinter:
    """ULIDs, monotonic within a millisecond, minted in a fraction of `python-ulid`'s time.

    `ULID()` costs 7-20 us an id in pure Python, a tenth of a step's CPU at ten events a step. Here a
    ULID's 130 bits (128 and two zero bits at the top) are spelled ten bits at a time from a table,
    and within one millisecond the next id adds one to the randomness (as ULID's monotonic
    generators do), so usually only its last two characters are new.
    """

    def __init__(self) -> None:
        self.milliseconds = 0
        self.randomness = 0
        self.prefix = ""  # the last id's first 24 characters

    def __call__(self) -> str:
        milliseconds = time.time_ns() // 1_000_000
        if milliseconds <= self.milliseconds:  # the same millisecond (or the clock stepped back): count on
            randomness = self.randomness + 1
            if randomness & 1023:  # no carry out of the last two characters
                self.randomness = randomness
                return self.prefix + _PAIRS[randomness & 1023]
            milliseconds = self.milliseconds
            if randomness >> _RANDOM_BITS:  # the randomness ran out: move to the next millisecond
                milliseconds, randomness = milliseconds + 1, int.from_bytes(os.urandom(10))
        else:
            randomness = int.from_bytes(os.urandom(10))
        self.milliseconds, self.randomness = milliseconds, randomness
        value = (milliseconds << _RANDOM_BITS) | randomness
        pairs = _PAIRS
        text = "".join([pairs[(value >> shift) & 1023] for shift in range(120, -1, -10)])
        self.prefix = text[:24]
        return text


new_ulid = _UlidMinter()
"""A new ULID (26 characters of Crockford base32), later than every one minted before in this process."""


def new_session_id() -> str:
    """A new session id."""
    return f"wrun_{new_ulid()}"


def new_event_id() -> str:
    """A new event id: minted once when an event is written, stored with it."""
    return f"evt_{new_ulid()}"


def new_delivery_id() -> str:
    """A new delivery id."""
    return str(uuid.uuid4())


def is_session_id(value: str) -> bool:
    """Whether `value` has the shape of a session id (it may still not exist)."""
    return SESSION_ID_PATTERN.match(value) is not None
