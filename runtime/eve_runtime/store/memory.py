"""The memory store: the store contract kept in dictionaries, for unit tests.

It has the same semantics as the durable backends (idempotency window, create-once operation
ids, event-index conflicts, fencing, notification of new events) but keeps nothing across
processes: `close` and `open` on the same object keep everything, a new object starts empty.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from eve_runtime.store.backend_common import EventWaiters, check_events, encode_payload
from eve_runtime.store.base import (
    IDEMPOTENCY_WINDOW,
    MAX_ADDRESSES,
    AddressLimitReached,
    Commit,
    DeliveryRecord,
    EnqueueResult,
    EventRow,
    LineChunk,
    NewDelivery,
    OwnershipLost,
    ScheduleClaim,
    SessionNotActive,
    SessionRecord,
    SessionStatus,
    Store,
    StoreError,
)

__all__ = ["MemoryStore"]


@dataclass
class _Session:
    record: SessionRecord
    events: list[EventRow] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    checkpoint: str | None = None
    channel_state: str | None = None
    deliveries: list[DeliveryRecord] = field(default_factory=list)
    payloads: list[str] = field(default_factory=list)
    """Each delivery's payload as JSON (decoded afresh on every read, like a real store)."""
    keys: OrderedDict[str, int] = field(default_factory=OrderedDict)
    """Idempotency key -> delivery seq, oldest first."""


@dataclass
class _Lease:
    owner: str | None
    expires_at: float
    fence: int


class MemoryStore(Store):
    """A store in memory with the full contract's semantics, for unit tests."""

    def __init__(self) -> None:
        self._open = False
        self._sessions: dict[str, _Session] = {}
        self._order: list[str] = []
        self._operations: dict[str, str] = {}
        self._delivery_ids: set[str] = set()
        self._leases: dict[str, _Lease] = {}
        self._addresses: dict[str, str] = {}
        """Address -> the session that claimed it last, in claim order."""
        self._fires: dict[str, float] = {}
        """Schedule -> its last claimed fire time."""
        self._waiters = EventWaiters()

    async def open(self) -> None:
        self._open = True

    async def close(self) -> None:
        self._open = False

    def _check_open(self) -> None:
        if not self._open:
            raise StoreError("The memory store is closed: call open() first.")

    # -- sessions ---------------------------------------------------------------------------

    async def create_session(
        self, record: SessionRecord, first: NewDelivery | None = None
    ) -> tuple[SessionRecord, bool]:
        self._check_open()
        if record.operation_id is not None and record.operation_id in self._operations:
            return self._sessions[self._operations[record.operation_id]].record, False
        if record.id in self._sessions:
            raise StoreError(f"A session with id {record.id!r} already exists.")
        payload = None
        if first is not None:
            payload = encode_payload(first.payload)
            self._check_delivery_id(first.id)
        session = _Session(record)
        self._sessions[record.id] = session
        self._order.append(record.id)
        if record.operation_id is not None:
            self._operations[record.operation_id] = record.id
        if first is not None and payload is not None:
            self._append_delivery(session, first, payload)
        return record, True

    async def get_session(self, session_id: str) -> SessionRecord | None:
        self._check_open()
        session = self._sessions.get(session_id)
        return None if session is None else session.record

    async def list_sessions(self, status: SessionStatus = "active") -> list[SessionRecord]:
        self._check_open()
        records = [self._sessions[i].record for i in self._order]
        return sorted((r for r in records if r.status == status), key=lambda r: r.created_at)

    # -- inbox ------------------------------------------------------------------------------

    async def enqueue(self, session_id: str, delivery: NewDelivery) -> EnqueueResult:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None or session.record.status != "active":
            state = "does not exist" if session is None else f"is {session.record.status}"
            raise SessionNotActive(f"Session {session_id!r} {state}, so it accepts no delivery.")
        key = delivery.idempotency_key
        if key is not None and key in session.keys:
            return EnqueueResult(self._delivery(session, session.keys[key]), duplicate=True)
        payload = encode_payload(delivery.payload)
        self._check_delivery_id(delivery.id)
        return EnqueueResult(self._append_delivery(session, delivery, payload), duplicate=False)

    async def pending_deliveries(self, session_id: str) -> list[DeliveryRecord]:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            return []
        return [self._delivery(session, d.seq) for d in session.deliveries if not d.consumed]

    def _check_delivery_id(self, delivery_id: str) -> None:
        if delivery_id in self._delivery_ids:
            raise StoreError(f"A delivery with id {delivery_id!r} already exists.")

    def _append_delivery(self, session: _Session, delivery: NewDelivery, payload: str) -> DeliveryRecord:
        seq = len(session.deliveries)
        record = DeliveryRecord(
            id=delivery.id,
            session_id=session.record.id,
            seq=seq,
            kind=delivery.kind,
            payload={},
            idempotency_key=delivery.idempotency_key,
            created_at=time.time(),
        )
        session.deliveries.append(record)
        session.payloads.append(payload)
        self._delivery_ids.add(delivery.id)
        if delivery.idempotency_key is not None:
            session.keys[delivery.idempotency_key] = seq
            while len(session.keys) > IDEMPOTENCY_WINDOW:
                session.keys.popitem(last=False)
        return self._delivery(session, seq)

    @staticmethod
    def _delivery(session: _Session, seq: int) -> DeliveryRecord:
        return replace(session.deliveries[seq], payload=json.loads(session.payloads[seq]))

    # -- events, history, checkpoint ------------------------------------------------------------

    async def commit(self, session_id: str, commit: Commit) -> None:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotActive(f"Session {session_id!r} does not exist.")
        if commit.fence is not None:
            lease = self._leases.get(session_id)
            if lease is None or lease.owner is None or lease.fence != commit.fence:
                current = "none" if lease is None or lease.owner is None else str(lease.fence)
                raise OwnershipLost(
                    f"Session {session_id!r} has a new owner (fencing token {current}, this writer holds "
                    f"{commit.fence}): this writer was superseded and must stop."
                )
        check_events(session_id, len(session.events), commit.events)
        # Validated: nothing below can fail, so the commit applies entirely or not at all.
        session.events.extend(EventRow(e.index, e.type, bytes(e.line)) for e in commit.events)
        if commit.replace_history:
            session.history.clear()
        session.history.extend(commit.history)
        if commit.checkpoint is not None:
            session.checkpoint = commit.checkpoint
        consumed = set(commit.consumed)
        if consumed:
            session.deliveries = [replace(d, consumed=True) if d.id in consumed else d for d in session.deliveries]
        if commit.status is not None:
            session.record = replace(session.record, status=commit.status)
        if commit.handoff is not None:
            handoff = commit.handoff
            session.record = replace(session.record, deployment=handoff.deployment, deadline=handoff.deadline)
        if commit.events:
            self._waiters.notify((session_id,))

    async def read_events(
        self, session_id: str, start: int = 0, end: int | None = None, *, skip: Collection[str] = ()
    ) -> list[EventRow]:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            return []
        rows = session.events[max(start, 0) : end if end is None else max(end, 0)]
        return [row for row in rows if row.type not in skip] if skip else rows

    async def read_chunk(
        self, session_id: str, start: int, end: int, stop_after: frozenset[str] = frozenset()
    ) -> LineChunk:
        rows = await self.read_events(session_id, start, end)
        stop = next((i for i, row in enumerate(rows) if row.type in stop_after), None) if stop_after else None
        if stop is not None:
            rows = rows[: stop + 1]
        return LineChunk(len(rows), b"".join([row.line + b"\n" for row in rows]), stopped=stop is not None)

    async def event_count(self, session_id: str) -> int:
        self._check_open()
        session = self._sessions.get(session_id)
        return 0 if session is None else len(session.events)

    async def wait_for_events(self, session_id: str, known: int, timeout: float) -> int:
        return await self._waiters.wait_for_count(session_id, known, timeout, lambda: self.event_count(session_id))

    def watched(self, session_id: str) -> bool:
        return self._waiters.watched(session_id)

    async def load_checkpoint(self, session_id: str) -> str | None:
        self._check_open()
        session = self._sessions.get(session_id)
        return None if session is None else session.checkpoint

    async def load_history(self, session_id: str) -> list[str]:
        self._check_open()
        session = self._sessions.get(session_id)
        return [] if session is None else list(session.history)

    # -- channel addresses ------------------------------------------------------------------

    def _holder(self, address: str) -> str | None:
        session_id = self._addresses.get(address)
        if session_id is None or self._sessions[session_id].record.status != "active":
            return None
        return session_id

    def _claim(self, session_id: str, address: str) -> None:
        self._addresses.pop(address, None)  # re-inserted last: claim order
        self._addresses[address] = session_id

    async def create_at_address(
        self,
        record: SessionRecord,
        first: NewDelivery,
        address: str,
        *,
        replacing: str | None = None,
        channel_state: str | None = None,
    ) -> tuple[SessionRecord, bool]:
        self._check_open()
        if record.operation_id is not None and record.operation_id in self._operations:
            return self._sessions[self._operations[record.operation_id]].record, False
        holder = self._holder(address)
        if holder is not None and holder != replacing:
            return self._sessions[holder].record, False
        session, created = await self.create_session(record, first)
        self._claim(session.id, address)
        if created and channel_state is not None:
            self._sessions[session.id].channel_state = channel_state
        return session, created

    async def address_holder(self, address: str) -> str | None:
        self._check_open()
        return self._holder(address)

    async def claim_address(self, session_id: str, address: str) -> str:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None or session.record.status != "active":
            raise SessionNotActive(f"Session {session_id!r} is not active, so it cannot claim an address.")
        holder = self._holder(address)
        if holder is not None:
            return holder
        if sum(1 for held in self._addresses.values() if held == session_id) >= MAX_ADDRESSES:
            raise AddressLimitReached(session_id)
        self._claim(session_id, address)
        return session_id

    async def session_addresses(self, session_id: str) -> list[str]:
        self._check_open()
        return [address for address, held in self._addresses.items() if held == session_id]

    # -- channel state ----------------------------------------------------------------------

    async def load_channel_state(self, session_id: str) -> str | None:
        self._check_open()
        session = self._sessions.get(session_id)
        return None if session is None else session.channel_state

    async def save_channel_state(self, session_id: str, value: str) -> None:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotActive(f"Session {session_id!r} does not exist, so it has no channel state.")
        session.channel_state = value

    # -- ownership --------------------------------------------------------------------------

    async def acquire(self, session_id: str, owner: str, ttl: float) -> int | None:
        self._check_open()
        now = time.time()
        lease = self._leases.get(session_id)
        if lease is None:
            self._leases[session_id] = _Lease(owner, now + ttl, 1)
            return 1
        if lease.owner == owner:
            lease.expires_at = now + ttl
            return lease.fence
        if lease.owner is not None and lease.expires_at > now:
            return None
        lease.owner, lease.expires_at, lease.fence = owner, now + ttl, lease.fence + 1
        return lease.fence

    async def release(self, session_id: str, owner: str) -> None:
        self._check_open()
        lease = self._leases.get(session_id)
        if lease is not None and lease.owner == owner:
            lease.owner, lease.expires_at = None, 0.0

    async def orphaned_sessions(self) -> list[str]:
        self._check_open()
        now = time.time()
        return [
            session.record.id
            for session in sorted(self._sessions.values(), key=lambda s: s.record.created_at)
            if session.record.status == "active"
            and (lease := self._leases.get(session.record.id)) is not None
            and lease.owner is not None
            and lease.expires_at <= now
        ]

    async def lease_owners(self) -> list[str]:
        self._check_open()
        now = time.time()
        return sorted({lease.owner for lease in self._leases.values() if lease.owner and lease.expires_at > now})

    async def expire_leases(self, owner: str) -> None:
        self._check_open()
        for lease in self._leases.values():
            if lease.owner == owner:
                lease.expires_at = min(lease.expires_at, time.time())

    async def expired_sessions(self, now: float, limit: int) -> list[str]:
        self._check_open()
        expired = [s.record for s in self._sessions.values() if s.record.status == "active"]
        expired = [r for r in expired if r.deadline is not None and r.deadline <= now and not self._held(r.id)]
        return [r.id for r in sorted(expired, key=lambda r: (r.deadline, r.created_at))][:limit]

    def _held(self, session_id: str) -> bool:
        lease = self._leases.get(session_id)
        return lease is not None and lease.owner is not None and lease.expires_at > time.time()

    # -- schedules ----------------------------------------------------------------------------

    async def claim_schedule_fire(self, schedule: str, at: float) -> ScheduleClaim:
        self._check_open()
        previous = self._fires.get(schedule)
        if previous is not None and at <= previous:
            return ScheduleClaim(claimed=False, previous=previous)
        self._fires[schedule] = at
        return ScheduleClaim(claimed=True, previous=previous)
