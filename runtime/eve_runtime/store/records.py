"""The records a store keeps and hands out: sessions, deliveries, commits, schedule claims.

They are the data of the store contract (`eve_runtime.store.base`, which exports them too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from eve_runtime.store.event_log import EventRow

__all__ = [
    "IDEMPOTENCY_WINDOW",
    "Commit",
    "DeliveryKind",
    "DeliveryRecord",
    "EnqueueResult",
    "NewDelivery",
    "ScheduleClaim",
    "SessionHandoff",
    "SessionRecord",
    "SessionStatus",
]

IDEMPOTENCY_WINDOW = 1024
"""How many distinct idempotency keys a session remembers (the newest ones)."""

SessionStatus = Literal["active", "completed", "failed", "reset"]
DeliveryKind = Literal["message", "responses", "cancel", "compact", "clear", "reset", "task"]
"""`task`: a child session reporting a task's result to its parent."""


@dataclass(frozen=True)
class SessionRecord:
    """One session."""

    id: str
    agent: str
    """The root agent's name."""
    created_at: float
    """Seconds since the epoch."""
    eve_version: str
    """The framework version that runs the session (a session of another version is stranded)."""
    status: SessionStatus = "active"
    deadline: float | None = None
    """When the session times out (seconds since the epoch); None for never."""
    operation_id: str | None = None
    """The create-once key the session was created with."""
    deployment: str | None = None
    """The build of the app that runs the session (its manifest's content hash); None when not recorded."""


@dataclass(frozen=True)
class NewDelivery:
    """A delivery to accept into a session's inbox."""

    id: str
    """The delivery id (the caller mints it; a duplicate idempotency key returns the first one instead)."""
    kind: DeliveryKind
    payload: dict[str, Any] = field(default_factory=dict)
    """Kind-specific JSON data (the message, the input responses, the cancel's turn id, ...)."""
    idempotency_key: str | None = None


@dataclass(frozen=True)
class DeliveryRecord:
    """An accepted delivery."""

    id: str
    session_id: str
    seq: int
    """Arrival order within the session, from 0."""
    kind: DeliveryKind
    payload: dict[str, Any]
    idempotency_key: str | None
    created_at: float
    consumed: bool = False


@dataclass(frozen=True)
class EnqueueResult:
    """The outcome of `enqueue`: the delivery, and whether it repeated an earlier idempotency key."""

    delivery: DeliveryRecord
    duplicate: bool
    pending: tuple[DeliveryRecord, ...] | None = None
    """The session's deliveries not consumed yet, this one included, in arrival order, as the enqueue's
    own transaction saw them when it committed; None when the store did not read them (then
    `pending_deliveries` tells). The Postgres store tells them for a new delivery while there are few."""


@dataclass(frozen=True)
class SessionHandoff:
    """A session moving to another build of the app (a deployment handoff): its record's new values."""

    deployment: str
    """The build the session runs from now on."""
    deadline: float | None
    """The session's new deadline (the handoff restarts the timeout); None for never."""


@dataclass(frozen=True)
class Commit:
    """Everything one durable step of a session writes, applied atomically."""

    events: Sequence[EventRow] = ()
    """Appended to the event log; the first index must equal the session's current event count."""
    history: Sequence[str] = ()
    """JSON messages appended to the history log."""
    replace_history: bool = False
    """Empty the history log before appending `history` (a clear)."""
    checkpoint: str | None = None
    """The session's new checkpoint (JSON); None keeps the current one."""
    consumed: Sequence[str] = ()
    """Delivery ids this commit consumes."""
    status: SessionStatus | None = None
    """The session's new status, when it ends."""
    fence: int | None = None
    """The fencing token from `acquire`; when given, a commit by a superseded owner is refused."""
    handoff: SessionHandoff | None = None
    """Sets the session record's `deployment` and `deadline` (a deployment handoff)."""


@dataclass(frozen=True)
class ScheduleClaim:
    """The outcome of `claim_schedule_fire`."""

    claimed: bool
    """Whether this call claimed the fire time (the one caller that runs it)."""
    previous: float | None
    """The schedule's last claimed fire time before this call; None when it never had one."""
