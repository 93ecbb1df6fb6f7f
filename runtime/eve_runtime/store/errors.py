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
    "StoreUnavailable",
]

MAX_ADDRESSES = 256
"""How many channel addresses one session may hold (its first plus its aliases)."""


class StoreError(RuntimeFailure):
    """A store operation failed."""


class StoreUnavailable(StoreError):
    """The store cannot take or serve work right now; nothing of the refused operation was stored.

    Its disk is full (or under the free-space floor), or its database cannot be reached: retry later.

    Args:
        message: What failed, for the log (it may name a file or a server).
        reason: What failed, for clients and `GET /eve/v1/health` (names no file, host or password).
        retry_after: Seconds a client should wait before retrying.
    """

    def __init__(self, message: str, *, reason: str = "the database cannot be reached", retry_after: int = 5) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


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
