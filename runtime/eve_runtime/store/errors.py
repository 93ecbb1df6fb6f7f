"""The store's errors: what a store operation raises when it fails or refuses (re-exported by `base`)."""

from __future__ import annotations

from eve_runtime.errors import RuntimeFailure

__all__ = [
    "MAX_ADDRESSES",
    "AddressInUse",
    "AddressLimitReached",
    "EventIndexConflict",
    "OwnershipLost",
    "SessionNotActive",
    "StoreError",
    "StoreLocked",
]

MAX_ADDRESSES = 256
"""How many channel addresses one session may hold (its first plus its aliases)."""


class StoreError(RuntimeFailure):
    """A store operation failed."""


class StoreLocked(StoreError):
    """Another process already owns this local store (one writer process per store)."""


class AddressInUse(StoreError):
    """A channel address is held by another active session."""

    def __init__(self, address: str, holder: str) -> None:
        super().__init__(f"The channel address {address!r} is held by another active session ({holder}).")
        self.address = address
        self.holder = holder


class AddressLimitReached(StoreError):
    """A session already holds `MAX_ADDRESSES` channel addresses, so it claims no more."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"Session {session_id!r} already holds {MAX_ADDRESSES} addresses, the most one may hold.")
        self.session_id = session_id


class SessionNotActive(StoreError):
    """The session does not exist or has ended, so it accepts no delivery."""


class EventIndexConflict(StoreError):
    """A commit's first event index is not the session's current event count (a stale or racing writer)."""


class OwnershipLost(StoreError):
    """A commit carried a fencing token that is no longer the session's current one."""
