"""The SQLite store's statements: writes run on the writer thread, reads on the reader thread.

Every function takes the connection as its first argument and runs synchronously. Write
functions run inside the writer's transaction (in their own savepoint) and raise before writing
anything when they refuse, so a refused operation leaves the group transaction untouched.
"""

from __future__ import annotations

import json
import sqlite3
import time

from eve_runtime.store.backend_common import check_events, encode_payload
from eve_runtime.store.base import (
    IDEMPOTENCY_WINDOW,
    MAX_ADDRESSES,
    AddressLimitReached,
    Commit,
    DeliveryRecord,
    EnqueueResult,
    EventRow,
    NewDelivery,
    OwnershipLost,
    ScheduleClaim,
    SessionNotActive,
    SessionRecord,
    SessionStatus,
    StoreError,
)
from eve_runtime.store.rows import (
    DELIVERY_COLUMNS,
    SESSION_COLUMNS,
    delivery_from_row,
    session_from_row,
    session_values,
)
from eve_runtime.store.sqlite_schema import KEPT_EVENTS, STREAMED_TYPES, from_text, to_text

__all__ = [
    "address_holder",
    "claim_address",
    "claim_schedule_fire",
    "create_at_address",
    "session_addresses",
    "apply_commit",
    "create_session",
    "enqueue",
    "event_count",
    "get_session",
    "list_sessions",
    "load_channel_state",
    "load_checkpoint",
    "load_history",
    "expired_sessions",
    "pending_deliveries",
    "read_events",
    "save_channel_state",
]


# -- reads --------------------------------------------------------------------------------------


def get_session(conn: sqlite3.Connection, session_id: str) -> SessionRecord | None:
    """The session, or None."""
    row = conn.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else session_from_row(row)


def list_sessions(conn: sqlite3.Connection, status: SessionStatus) -> list[SessionRecord]:
    """Every session with this status, oldest first."""
    rows = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE status = ? ORDER BY created_at, rowid", (status,)
    ).fetchall()
    return [session_from_row(row) for row in rows]


def pending_deliveries(conn: sqlite3.Connection, session_id: str) -> list[DeliveryRecord]:
    """Deliveries not consumed yet, in arrival order."""
    rows = conn.execute(
        f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE session_id = ? AND consumed = 0 ORDER BY seq",
        (session_id,),
    ).fetchall()
    return [delivery_from_row(row) for row in rows]


def read_events(
    conn: sqlite3.Connection, session_id: str, start: int, end: int | None, skip: tuple[str, ...] = ()
) -> list[EventRow]:
    """Events with `start <= index < end` whose type is not in `skip`, in order."""
    # the types left out are filtered in SQLite: their rows never become Python objects; without
    # the streamed deltas, through the partial index that leaves them out (`KEPT_EVENTS`)
    if set(skip) == set(STREAMED_TYPES):
        leave_out, skip = f" AND {KEPT_EVENTS}", ()
    else:
        leave_out = f" AND type NOT IN ({','.join('?' * len(skip))})" if skip else ""
    rows = conn.execute(
        f"SELECT idx, type, line FROM events WHERE session_id = ? AND idx >= ? AND idx < ?{leave_out} ORDER BY idx",
        (session_id, start, (1 << 62) if end is None else end, *skip),
    ).fetchall()
    return [EventRow(row[0], row[1], row[2]) for row in rows]  # BLOB columns already come back as bytes


def event_count(conn: sqlite3.Connection, session_id: str) -> int:
    """How many events the session has."""
    row = conn.execute("SELECT MAX(idx) FROM events WHERE session_id = ?", (session_id,)).fetchone()
    return 0 if row[0] is None else int(row[0]) + 1


def load_checkpoint(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The session's checkpoint, or None."""
    row = conn.execute("SELECT state FROM checkpoints WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else from_text(row[0])


def load_history(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The history log, oldest first."""
    rows = conn.execute("SELECT message FROM history WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    return [from_text(row[0]) for row in rows]


# -- writes -------------------------------------------------------------------------------------


def create_session(
    conn: sqlite3.Connection, record: SessionRecord, first: NewDelivery | None
) -> tuple[SessionRecord, bool]:
    """Create a session and its first delivery, or return the one created with the same operation id."""
    operation = None if record.operation_id is None else to_text(record.operation_id)
    if operation is not None:
        row = conn.execute("SELECT session_id FROM operations WHERE operation_id = ?", (operation,)).fetchone()
        if row is not None:
            existing = get_session(conn, row[0])
            if existing is None:  # pragma: no cover - operations and sessions are written together
                raise StoreError(f"Operation {record.operation_id!r} names a missing session {row[0]!r}.")
            return existing, False
    if get_session(conn, record.id) is not None:
        raise StoreError(f"A session with id {record.id!r} already exists.")
    payload = None if first is None else encode_payload(first.payload)
    conn.execute(
        f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        session_values(record, operation),
    )
    if operation is not None:
        conn.execute("INSERT INTO operations (operation_id, session_id) VALUES (?, ?)", (operation, record.id))
    if first is not None and payload is not None:
        _insert_delivery(conn, record.id, first, payload)
    return record, True


def enqueue(conn: sqlite3.Connection, session_id: str, delivery: NewDelivery) -> EnqueueResult:
    """Accept a delivery, or return the first one with the same idempotency key."""
    row = conn.execute("SELECT status FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None or row[0] != "active":
        state = "does not exist" if row is None else f"is {row[0]}"
        raise SessionNotActive(f"Session {session_id!r} {state}, so it accepts no delivery.")
    if delivery.idempotency_key is not None:
        found = conn.execute(
            f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE id = "
            "(SELECT delivery_id FROM idempotency_keys WHERE session_id = ? AND key = ?)",
            (session_id, to_text(delivery.idempotency_key)),
        ).fetchone()
        if found is not None:
            return EnqueueResult(delivery_from_row(found), duplicate=True)
    payload = encode_payload(delivery.payload)
    return EnqueueResult(_insert_delivery(conn, session_id, delivery, payload), duplicate=False)


def _insert_delivery(conn: sqlite3.Connection, session_id: str, delivery: NewDelivery, payload: str) -> DeliveryRecord:
    if conn.execute("SELECT 1 FROM deliveries WHERE id = ?", (delivery.id,)).fetchone() is not None:
        raise StoreError(f"A delivery with id {delivery.id!r} already exists.")
    row = conn.execute("SELECT MAX(seq) FROM deliveries WHERE session_id = ?", (session_id,)).fetchone()
    seq = 0 if row[0] is None else int(row[0]) + 1
    key = None if delivery.idempotency_key is None else to_text(delivery.idempotency_key)
    now = time.time()
    conn.execute(
        f"INSERT INTO deliveries ({DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
        (delivery.id, session_id, seq, delivery.kind, payload, key, now),
    )
    if key is not None:
        conn.execute(
            "INSERT INTO idempotency_keys (session_id, key, delivery_id, seq) VALUES (?, ?, ?, ?)",
            (session_id, key, delivery.id, seq),
        )
        # Keep the newest IDEMPOTENCY_WINDOW keys: drop everything at or below the first one past it.
        conn.execute(
            "DELETE FROM idempotency_keys WHERE session_id = ? AND seq <= (SELECT seq FROM idempotency_keys "
            "WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
            (session_id, session_id, IDEMPOTENCY_WINDOW),
        )
    return DeliveryRecord(
        id=delivery.id,
        session_id=session_id,
        seq=seq,
        kind=delivery.kind,
        payload=json.loads(payload),
        idempotency_key=delivery.idempotency_key,
        created_at=now,
    )


def apply_commit(conn: sqlite3.Connection, session_id: str, commit: Commit) -> None:
    """Validate a commit, then write all of it."""
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise SessionNotActive(f"Session {session_id!r} does not exist.")
    if commit.fence is not None:
        lease = conn.execute("SELECT owner, fence FROM owners WHERE session_id = ?", (session_id,)).fetchone()
        if lease is None or lease[0] is None or lease[1] != commit.fence:
            current = "none" if lease is None or lease[0] is None else str(lease[1])
            raise OwnershipLost(
                f"Session {session_id!r} has a new owner (fencing token {current}, this writer holds "
                f"{commit.fence}): this writer was superseded and must stop."
            )
    if commit.events:
        check_events(session_id, event_count(conn, session_id), commit.events)
        conn.executemany(
            "INSERT INTO events (session_id, idx, type, line) VALUES (?, ?, ?, ?)",
            [(session_id, e.index, e.type, bytes(e.line)) for e in commit.events],
        )
    if commit.replace_history:
        conn.execute("DELETE FROM history WHERE session_id = ?", (session_id,))
    if commit.history:
        row = conn.execute("SELECT MAX(seq) FROM history WHERE session_id = ?", (session_id,)).fetchone()
        start = 0 if row[0] is None else int(row[0]) + 1
        conn.executemany(
            "INSERT INTO history (session_id, seq, message) VALUES (?, ?, ?)",
            [(session_id, start + i, to_text(message)) for i, message in enumerate(commit.history)],
        )
    if commit.checkpoint is not None:
        conn.execute(
            "INSERT INTO checkpoints (session_id, state) VALUES (?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET state = excluded.state",
            (session_id, to_text(commit.checkpoint)),
        )
    if commit.consumed:
        conn.executemany(
            "UPDATE deliveries SET consumed = 1 WHERE id = ? AND session_id = ?",
            [(delivery_id, session_id) for delivery_id in commit.consumed],
        )
    if commit.status is not None:
        conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (commit.status, session_id))
    if commit.handoff is not None:
        conn.execute(
            "UPDATE sessions SET deployment = ?, deadline = ? WHERE id = ?",
            (commit.handoff.deployment, commit.handoff.deadline, session_id),
        )


def address_holder(conn: sqlite3.Connection, address: str) -> str | None:
    """The active session holding the address, or None."""
    row = conn.execute(
        "SELECT a.session_id FROM addresses a JOIN sessions s ON s.id = a.session_id "
        "WHERE a.address = ? AND s.status = 'active'",
        (to_text(address),),
    ).fetchone()
    return None if row is None else str(row[0])


def session_addresses(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The session's addresses in claim order."""
    rows = conn.execute("SELECT address FROM addresses WHERE session_id = ? ORDER BY rowid", (session_id,)).fetchall()
    return [from_text(row[0]) for row in rows]


def _claim(conn: sqlite3.Connection, session_id: str, address: str) -> None:
    # Delete, then insert: the new claim gets a new rowid, so rowid order is claim order.
    conn.execute("DELETE FROM addresses WHERE address = ?", (to_text(address),))
    conn.execute("INSERT INTO addresses (address, session_id) VALUES (?, ?)", (to_text(address), session_id))


def create_at_address(
    conn: sqlite3.Connection,
    record: SessionRecord,
    first: NewDelivery,
    address: str,
    replacing: str | None,
    channel_state: str | None = None,
) -> tuple[SessionRecord, bool]:
    """Create a session holding the address, or return the session that wins (see the store contract)."""
    if record.operation_id is not None:
        row = conn.execute(
            "SELECT session_id FROM operations WHERE operation_id = ?", (to_text(record.operation_id),)
        ).fetchone()
        if row is not None:
            existing = get_session(conn, row[0])
            if existing is not None:
                return existing, False
    holder = address_holder(conn, address)
    if holder is not None and holder != replacing:
        existing = get_session(conn, holder)
        assert existing is not None  # the join found it
        return existing, False
    session, created = create_session(conn, record, first)
    _claim(conn, session.id, address)
    if created and channel_state is not None:
        _put_channel_state(conn, session.id, channel_state)
    return session, created


def load_channel_state(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The session's channel state, or None."""
    row = conn.execute("SELECT value FROM channel_states WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else from_text(row[0])


def _put_channel_state(conn: sqlite3.Connection, session_id: str, value: str) -> None:
    conn.execute(
        "INSERT INTO channel_states (session_id, value) VALUES (?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET value = excluded.value",
        (session_id, to_text(value)),
    )


def save_channel_state(conn: sqlite3.Connection, session_id: str, value: str) -> None:
    """Replace the channel state of an existing session."""
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise SessionNotActive(f"Session {session_id!r} does not exist, so it has no channel state.")
    _put_channel_state(conn, session_id, value)


def claim_address(conn: sqlite3.Connection, session_id: str, address: str) -> str:
    """Claim an address for an active session (an alias); the holder afterwards."""
    row = conn.execute("SELECT status FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None or row[0] != "active":
        raise SessionNotActive(f"Session {session_id!r} is not active, so it cannot claim an address.")
    holder = address_holder(conn, address)
    if holder is not None:
        return holder
    held = conn.execute("SELECT COUNT(*) FROM addresses WHERE session_id = ?", (session_id,)).fetchone()[0]
    if int(held) >= MAX_ADDRESSES:
        raise AddressLimitReached(session_id)
    _claim(conn, session_id, address)
    return session_id


def expired_sessions(conn: sqlite3.Connection, now: float, limit: int) -> list[str]:
    """Active sessions past their deadline (at `now`) that no unexpired lease holds, earliest deadline first."""
    rows = conn.execute(
        "SELECT s.id FROM sessions s LEFT JOIN owners o ON o.session_id = s.id "
        "WHERE s.status = 'active' AND s.deadline IS NOT NULL AND s.deadline <= ? "
        "AND (o.owner IS NULL OR o.expires_at <= ?) ORDER BY s.deadline, s.created_at, s.rowid LIMIT ?",
        (now, time.time(), limit),
    ).fetchall()
    return [str(row[0]) for row in rows]


def claim_schedule_fire(conn: sqlite3.Connection, schedule: str, at: float) -> ScheduleClaim:
    """Claim a fire time later than the schedule's last one (see `Store.claim_schedule_fire`), on the writer."""
    row = conn.execute("SELECT last_fire FROM schedule_fires WHERE schedule = ?", (schedule,)).fetchone()
    previous = None if row is None else float(row[0])
    if previous is not None and at <= previous:
        return ScheduleClaim(claimed=False, previous=previous)
    conn.execute(
        "INSERT INTO schedule_fires (schedule, last_fire, claimed_at) VALUES (?, ?, ?) "
        "ON CONFLICT (schedule) DO UPDATE SET last_fire = excluded.last_fire, claimed_at = excluded.claimed_at",
        (schedule, at, time.time()),
    )
    return ScheduleClaim(claimed=True, previous=previous)
