"""The store contract: everything a session keeps durably, behind one interface.

A store holds, per session:

- the **session record** (status, deadline, the eve version and the build of the app that run
  it, its create-once operation id);
- the **event log**: append-only, with an absolute index from 0 (the stream cursor); each event
  is stored as its serialized NDJSON line, so every read returns the same bytes;
- the **history log**: the model-facing messages, append-only (a clear replaces it);
- the **checkpoint**: one small JSON document describing where the session is (replaced by
  every commit that carries one), so recovery reads one checkpoint plus the history log;
- the **inbox**: accepted deliveries (messages, answers, controls) in arrival order, each with a
  delivery id, consumed by the session's actor; idempotency keys are remembered per session (the
  last 1,024 distinct keys);
- **ownership**: which worker may run the session, with a fencing token;
- **channel addresses**: channel-local continuation addresses (`<channel>:<token>`, a Slack
  thread, a webhook's thread id, ...), each held by at most one *active* session. A session
  claims its first address in the same transaction that creates it
  ([`Store.create_at_address`][eve_runtime.store.base.Store.create_at_address]), so two first
  messages racing for one address start one session; aliases add more addresses. A claim lasts
  while its session is active: an ended session's addresses are free again without any write
  (every lookup of a holder checks the session's status), and its claims stay readable for
  [`Store.session_addresses`][eve_runtime.store.base.Store.session_addresses] until another
  session claims the address.

Beside sessions, a store keeps each schedule's **last claimed fire time**: a fire time is claimed
by one caller, ever ([`Store.claim_schedule_fire`][eve_runtime.store.base.Store.claim_schedule_fire]),
so a schedule fires once per tick however many processes share the store.

Writes that belong together go through [`Store.commit`][eve_runtime.store.base.Store.commit]
in one transaction; a commit that is acknowledged is durable. Every backend (memory, SQLite,
Postgres) passes the same contract test suite.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection

from eve_runtime.store.errors import (
    MAX_ADDRESSES,
    AddressInUse,
    AddressLimitReached,
    EventIndexConflict,
    OwnershipLost,
    SessionNotActive,
    StoreError,
    StoreLocked,
    StoreUnavailable,
)
from eve_runtime.store.event_log import EventRow, LineChunk
from eve_runtime.store.records import (
    IDEMPOTENCY_WINDOW,
    Commit,
    DeliveryKind,
    DeliveryRecord,
    EnqueueResult,
    NewDelivery,
    ScheduleClaim,
    SessionHandoff,
    SessionRecord,
    SessionStatus,
)

__all__ = [
    "IDEMPOTENCY_WINDOW",
    "MAX_ADDRESSES",
    "AddressInUse",
    "AddressLimitReached",
    "Commit",
    "DeliveryKind",
    "DeliveryRecord",
    "EarlyDelivery",
    "EnqueueResult",
    "EventRow",
    "LineChunk",
    "NewDelivery",
    "OwnershipLost",
    "ScheduleClaim",
    "SessionNotActive",
    "SessionHandoff",
    "SessionRecord",
    "SessionStatus",
    "Store",
    "StoreError",
    "StoreLocked",
    "StoreUnavailable",
    "EventIndexConflict",
]


EarlyDelivery = Callable[[EnqueueResult, "asyncio.Future[EnqueueResult]"], None]
"""Told an accepted delivery before it is durable, with the future of its durability (`Store.enqueue_early`)."""


class Store(ABC):
    """The durable state of every session. All methods are safe to call from one event loop."""

    @abstractmethod
    async def open(self) -> None:
        """Open (and create when missing) the store. May raise `StoreLocked`."""

    @abstractmethod
    async def close(self) -> None:
        """Flush and release everything; the store can be opened again."""

    async def health(self) -> str | None:
        """Why the store cannot take new work right now (a full disk, an unreachable database), or None.

        `GET /eve/v1/health` reports `degraded` with this reason. The default: always healthy.
        """
        return None

    # -- sessions ---------------------------------------------------------------------------

    @abstractmethod
    async def create_session(
        self, record: SessionRecord, first: NewDelivery | None = None
    ) -> tuple[SessionRecord, bool]:
        """Create a session, with its first delivery in the same transaction.

        When `record.operation_id` names a session created before, nothing is written and that
        session is returned. Returns `(session, created)`.
        """

    @abstractmethod
    async def get_session(self, session_id: str) -> SessionRecord | None:
        """The session, or None when there is no such session."""

    @abstractmethod
    async def list_sessions(self, status: SessionStatus = "active") -> list[SessionRecord]:
        """Every session with this status, oldest first."""

    # -- inbox ------------------------------------------------------------------------------

    @abstractmethod
    async def enqueue(self, session_id: str, delivery: NewDelivery) -> EnqueueResult:
        """Accept a delivery durably (acknowledge it only after this returns).

        A delivery whose idempotency key is among the session's last 1,024 keys is not stored
        again: the first delivery with that key is returned with `duplicate=True`.

        Raises:
            SessionNotActive: The session does not exist or is not active.
        """

    async def enqueue_early(self, session_id: str, delivery: NewDelivery, early: EarlyDelivery) -> EnqueueResult:
        """`enqueue`, telling `early` the result as soon as it is known, while it becomes durable.

        `early(result, durable)` runs on the event loop before this returns; `durable` resolves
        (or fails) with the result once it is durable, also when the caller is cancelled meanwhile.
        Whoever acts on the result before that waits for `durable` before writing anything that
        depends on it. A store that learns the result only with its durability never calls
        `early` (the default); the SQLite store does, before its COMMIT.
        """
        return await self.enqueue(session_id, delivery)

    def orders_after(self, session_id: str) -> bool:
        """Whether the session's next write waits for its deliveries told early by itself.

        True when deliveries of the session were told early (`enqueue_early`) and are not durable
        yet, and the store applies a write of the session made now only after them, in their
        transaction or a later one, and not at all if one of them fails. The actor then need not
        wait for them before writing. False by default (the caller waits).
        """
        return False

    @abstractmethod
    async def pending_deliveries(self, session_id: str) -> list[DeliveryRecord]:
        """Deliveries not consumed yet, in arrival order."""

    # -- events, history, checkpoint ------------------------------------------------------------

    @abstractmethod
    async def commit(self, session_id: str, commit: Commit) -> None:
        """Apply a commit atomically and durably.

        Raises:
            EventIndexConflict: The first event's index is not the current event count.
            OwnershipLost: `commit.fence` is not the session's current fencing token.
        """

    @abstractmethod
    async def read_events(
        self, session_id: str, start: int = 0, end: int | None = None, *, skip: Collection[str] = ()
    ) -> list[EventRow]:
        """Events with `start <= index < end` (to the tail when `end` is None), in order, but types in `skip`."""

    @abstractmethod
    async def read_chunk(
        self, session_id: str, start: int, end: int, stop_after: frozenset[str] = frozenset()
    ) -> LineChunk:
        """The lines of the events from `start` (up to `end`, exclusive) as one NDJSON chunk.

        The chunk ends after the first event whose type is in `stop_after` (and says so in
        `stopped`); it may end before `end` otherwise too (where a cache of the newest lines ends,
        or the lines would not fit in one value of the backend: a caller reads on from
        `start + count`), but holds at least one event when there is one at `start`. A stream sends
        the body as is.
        """

    @abstractmethod
    async def event_count(self, session_id: str) -> int:
        """How many events the session has (the next index)."""

    @abstractmethod
    async def wait_for_events(self, session_id: str, known: int, timeout: float) -> int:
        """Wait until the session has more than `known` events, or `timeout` seconds pass; the event count then."""

    def watched(self, session_id: str) -> bool:
        """Whether someone may be reading the session's stream now (a `wait_for_events` waits, or did lately)."""
        return True

    @abstractmethod
    async def load_checkpoint(self, session_id: str) -> str | None:
        """The session's checkpoint, or None before its first."""

    @abstractmethod
    async def load_history(self, session_id: str) -> list[str]:
        """The history log, oldest first."""

    # -- channel addresses ------------------------------------------------------------------

    @abstractmethod
    async def create_at_address(
        self,
        record: SessionRecord,
        first: NewDelivery,
        address: str,
        *,
        replacing: str | None = None,
        channel_state: str | None = None,
    ) -> tuple[SessionRecord, bool]:
        """Create a session that holds `address`, with its first delivery, in one transaction.

        Nothing is written, and `(existing, False)` returned, when `record.operation_id` names a
        session created before, or when `address` is held by an active session other than
        `replacing` (a caller that lost a race delivers to that session instead). Otherwise the
        session is created holding `address` (taken from `replacing` when it held it), with
        `channel_state` as its channel state when given, and `(record, True)` returned.
        """

    @abstractmethod
    async def address_holder(self, address: str) -> str | None:
        """The id of the active session holding `address`; None when it was never claimed or its holder ended."""

    @abstractmethod
    async def claim_address(self, session_id: str, address: str) -> str:
        """Add `address` to an active session's addresses (an alias), unless another active session holds it.

        Returns the holder afterwards: `session_id` when claimed (or already held by it), the
        other session's id when that one holds it (nothing is written then).

        Raises:
            SessionNotActive: The session does not exist or is not active.
            AddressLimitReached: The session already holds `MAX_ADDRESSES` addresses.
        """

    @abstractmethod
    async def session_addresses(self, session_id: str) -> list[str]:
        """The addresses the session claimed, in claim order (an ended session's too, until claimed again)."""

    # -- channel state ----------------------------------------------------------------------

    @abstractmethod
    async def load_channel_state(self, session_id: str) -> str | None:
        """The session's channel state (JSON), or None when none was written (or no such session)."""

    @abstractmethod
    async def save_channel_state(self, session_id: str, value: str) -> None:
        """Replace the session's channel state (JSON) durably; an ended session's too.

        Raises:
            SessionNotActive: There is no such session.
        """

    # -- ownership --------------------------------------------------------------------------

    @abstractmethod
    async def acquire(self, session_id: str, owner: str, ttl: float) -> int | None:
        """Become (or stay) the session's owner for `ttl` seconds.

        Returns a fencing token that grows with every change of owner, or None while another
        owner's lease is unexpired.
        """

    @abstractmethod
    async def release(self, session_id: str, owner: str) -> None:
        """Give up ownership (no-op when `owner` does not hold it)."""

    @abstractmethod
    async def orphaned_sessions(self) -> list[str]:
        """Active sessions whose owner's lease expired without a release (the owner died), oldest first."""

    @abstractmethod
    async def lease_owners(self) -> list[str]:
        """The owners holding an unexpired lease on some session (each once)."""

    @abstractmethod
    async def expire_leases(self, owner: str) -> None:
        """End every lease `owner` holds now, as if it had expired: for an owner known to be dead.

        Its sessions are orphaned at once (its fencing tokens still refuse its commits).
        """

    @abstractmethod
    async def expired_sessions(self, now: float, limit: int) -> list[str]:
        """Active sessions whose deadline is at or before `now` that no owner holds an unexpired lease on.

        Earliest deadline first, at most `limit`. A session never leased, released, or whose
        owner's lease expired is included: a process looking for deadlines nobody fires wakes them.
        """

    # -- schedules ----------------------------------------------------------------------------

    @abstractmethod
    async def claim_schedule_fire(self, schedule: str, at: float) -> ScheduleClaim:
        """Claim the fire time `at` (seconds since the epoch) of a schedule, atomically and durably.

        Fire times are claimed in order: `at` is claimed only when it is later than the
        schedule's last claimed fire time (or it has none), and then becomes it; otherwise
        nothing is written. So each fire time is claimed at most once, by one caller, ever.
        """

    def on_delivery(self, callback: Callable[[str], None]) -> None:
        """Call `callback(session_id)` when *another process* accepts a delivery into a session's inbox.

        Stores served by one process (memory, SQLite) never call it: every delivery is accepted by
        the process that runs the session.
        """
        return None
