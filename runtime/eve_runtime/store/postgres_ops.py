"""The Postgres store's statements, mirroring `sqlite_ops.py` (same rules, same refusals).

Every function takes an autocommit connection from the pool. Reads are single statements; writes
run in one transaction each and lock what they decide on (the session row for its inbox, an
advisory lock per channel address, the lease row for ownership), so concurrent processes reach
the same outcomes the SQLite store's single writer does. A refused write raises before
committing anything.
"""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg

from eve_runtime.store.backend_common import encode_payload
from eve_runtime.store.base import (
    IDEMPOTENCY_WINDOW,
    MAX_ADDRESSES,
    AddressLimitReached,
    DeliveryRecord,
    EnqueueResult,
    LineChunk,
    NewDelivery,
    ScheduleClaim,
    SessionNotActive,
    SessionRecord,
    StoreError,
)
from eve_runtime.store.postgres_pool import Connection, execute, transaction
from eve_runtime.store.postgres_schema import (
    SQLSTATE_DELIVERY_EXISTS,
    SQLSTATE_NOT_ACTIVE,
    encode,
    lock_key,
)
from eve_runtime.store.rows import (
    DELIVERY_COLUMNS,
    SESSION_COLUMNS,
    delivery_from_row,
    session_from_row,
    session_values,
)

__all__ = [
    "fetch_all",
    "SESSION_COLUMNS",
    "DELIVERY_COLUMNS",
    "EXPIRED_SESSIONS",
    "acquire",
    "address_holder",
    "claim_address",
    "claim_schedule_fire",
    "create_at_address",
    "create_session",
    "enqueue",
    "get_session",
    "read_chunk",
    "release",
    "save_channel_state",
]


async def _one(conn: Connection, query: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
    cursor = await execute(conn, query, params)
    return await cursor.fetchone()


async def fetch_all(conn: Connection, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Every row `query` returns."""
    cursor = await execute(conn, query, params)
    return await cursor.fetchall()


async def get_session(conn: Connection, session_id: str) -> SessionRecord | None:
    """The session, or None."""
    row = await _one(conn, f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,))
    return None if row is None else session_from_row(row)


async def read_chunk(conn: Connection, session_id: str, start: int, end: int, stop_after: frozenset[str]) -> LineChunk:
    """The lines of the events with `start <= index < end` as one chunk (see `Store.read_chunk`)."""
    stop = None
    if stop_after and end > start:
        row = await _one(
            conn,
            "SELECT min(idx) FROM events WHERE session_id = %s AND idx >= %s AND idx < %s AND type = ANY(%s)",
            (session_id, start, end, sorted(stop_after)),
        )
        stop = None if row is None or row[0] is None else int(row[0])
        end = end if stop is None else stop + 1
    while True:
        try:
            row = await _one(
                conn,
                "SELECT count(*), string_agg(line || '\\x0a'::bytea, ''::bytea ORDER BY idx) FROM events"
                " WHERE session_id = %s AND idx >= %s AND idx < %s",
                (session_id, start, end),
            )
        except (psycopg.errors.ProgramLimitExceeded, psycopg.errors.OutOfMemory):
            if end - start <= 1:  # over a value's 1 GB: a smaller chunk (one line always fits)
                raise
            end = start + (end - start) // 2
            continue
        count = 0 if row is None else int(row[0])
        body = b"" if row is None or row[1] is None else bytes(row[1])
        return LineChunk(count, body, stopped=count > 0 and start + count - 1 == stop)


async def _by_operation(conn: Connection, operation: bytes) -> SessionRecord | None:
    row = await _one(
        conn,
        f"SELECT {SESSION_COLUMNS} FROM sessions "
        "WHERE id = (SELECT session_id FROM operations WHERE operation_id = %s)",
        (operation,),
    )
    return None if row is None else session_from_row(row)


async def _create(
    conn: Connection, record: SessionRecord, first: NewDelivery | None, notify: tuple[str, str] | None
) -> tuple[SessionRecord, bool]:
    """Inside a transaction: create the session, or return the one its operation id created."""
    operation = None if record.operation_id is None else encode(record.operation_id)
    payload = None if first is None else encode_payload(first.payload)
    if operation is not None:
        # Waits for a racing creator's transaction; inserts nothing when the operation exists.
        row = await _one(
            conn,
            "INSERT INTO operations (operation_id, session_id) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING 1",
            (operation, record.id),
        )
        if row is None:
            existing = await _by_operation(conn, operation)
            if existing is None:  # pragma: no cover - operations and sessions are written together
                raise StoreError(f"Operation {record.operation_id!r} names a missing session.")
            return existing, False
    row = await _one(
        conn,
        f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (id) DO NOTHING RETURNING 1",
        session_values(record, operation),
    )
    if row is None:
        raise StoreError(f"A session with id {record.id!r} already exists.")
    if first is not None and payload is not None:
        await _insert_delivery(conn, record.id, first, payload, 0, notify)
    return record, True


async def create_session(
    conn: Connection, record: SessionRecord, first: NewDelivery | None, notify: tuple[str, str] | None
) -> tuple[SessionRecord, bool]:
    """Create a session and its first delivery, or return the one created with the same operation id."""
    async with transaction(conn):
        return await _create(conn, record, first, notify)


async def enqueue(
    conn: Connection, session_id: str, delivery: NewDelivery, notify: tuple[str, str] | None, *, retried: bool = False
) -> EnqueueResult:
    """Accept a delivery, or return the first one with the same idempotency key (one `eve_enqueue` call).

    The session row's lock orders the session's deliveries (seq) and its idempotency keys. One
    statement, one round trip, and safe to send again after a lost connection (`retried`): a try
    that committed left the delivery's id behind, which the next try finds and returns.
    """
    payload = encode_payload(delivery.payload)
    key = None if delivery.idempotency_key is None else encode(delivery.idempotency_key)
    channel, tag = notify if notify is not None else (None, None)
    params = (session_id, delivery.id, delivery.kind, payload, key, time.time(), IDEMPOTENCY_WINDOW, channel, tag)
    try:
        cursor = await execute(conn, "SELECT * FROM eve_enqueue(%s, %s, %s, %s, %s, %s, %s, %s, %s)", params)
        rows = await cursor.fetchall()
    except psycopg.Error as exc:
        if exc.sqlstate == SQLSTATE_NOT_ACTIVE:
            status = exc.diag.message_primary or ""
            state = f"is {status}" if status else "does not exist"
            raise SessionNotActive(f"Session {session_id!r} {state}, so it accepts no delivery.") from None
        if exc.sqlstate == SQLSTATE_DELIVERY_EXISTS:
            if retried:  # the try whose connection was lost had committed it
                found = await _one(conn, f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE id = %s", (delivery.id,))
                if found is not None and found[1] == session_id:
                    return EnqueueResult(delivery_from_row(found), duplicate=False)
            raise StoreError(f"A delivery with id {delivery.id!r} already exists.") from None
        raise
    row = rows[0]
    record = delivery_from_row(row[1:])
    # a keyed delivery whose own earlier try (its connection lost) took the key is no duplicate
    duplicate = bool(row[0]) and record.id != delivery.id
    pending = None
    if not row[0] and all(other[1] is not None for other in rows[1:]):  # a row of NULLs: too many to tell
        pending = tuple(sorted([record, *(delivery_from_row(other[1:]) for other in rows[1:])], key=lambda d: d.seq))
    return EnqueueResult(record, duplicate=duplicate, pending=pending)


async def _insert_delivery(
    conn: Connection, session_id: str, delivery: NewDelivery, payload: str, seq: int, notify: tuple[str, str] | None
) -> DeliveryRecord:
    """Insert a delivery (and its idempotency key); at commit, NOTIFY `(channel, tag)` with `tag session_id`."""
    key = None if delivery.idempotency_key is None else encode(delivery.idempotency_key)
    now = time.time()
    row = await _one(
        conn,
        f"INSERT INTO deliveries ({DELIVERY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, FALSE) "
        "ON CONFLICT (id) DO NOTHING RETURNING 1",
        (delivery.id, session_id, seq, delivery.kind, payload, key, now),
    )
    if row is None:
        raise StoreError(f"A delivery with id {delivery.id!r} already exists.")
    if key is not None:
        await conn.execute(
            "INSERT INTO idempotency_keys (session_id, key, delivery_id, seq) VALUES (%s, %s, %s, %s)",
            (session_id, key, delivery.id, seq),
        )
        # Keep the newest IDEMPOTENCY_WINDOW keys: drop everything at or below the first one past it.
        await conn.execute(
            "DELETE FROM idempotency_keys WHERE session_id = %s AND seq <= (SELECT seq FROM idempotency_keys "
            "WHERE session_id = %s ORDER BY seq DESC LIMIT 1 OFFSET %s)",
            (session_id, session_id, IDEMPOTENCY_WINDOW),
        )
    if notify is not None:
        channel, tag = notify
        await conn.execute("SELECT pg_notify(%s, %s)", (channel, f"{tag} {session_id}"))
    return DeliveryRecord(
        id=delivery.id,
        session_id=session_id,
        seq=seq,
        kind=delivery.kind,
        payload=json.loads(payload),
        idempotency_key=delivery.idempotency_key,
        created_at=now,
    )


# -- channel addresses and state ------------------------------------------------------------------


async def address_holder(conn: Connection, address: str) -> str | None:
    """The active session holding the address, or None."""
    row = await _one(
        conn,
        "SELECT a.session_id FROM addresses a JOIN sessions s ON s.id = a.session_id "
        "WHERE a.address = %s AND s.status = 'active'",
        (encode(address),),
    )
    return None if row is None else str(row[0])


async def _lock_address(conn: Connection, address: str) -> None:
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("eve-address", address),))


async def _claim(conn: Connection, session_id: str, address: str) -> None:
    # Delete, then insert: the new claim gets a new claim_seq, so claim_seq order is claim order.
    await conn.execute("DELETE FROM addresses WHERE address = %s", (encode(address),))
    await conn.execute("INSERT INTO addresses (address, session_id) VALUES (%s, %s)", (encode(address), session_id))


async def _put_channel_state(conn: Connection, session_id: str, value: str) -> None:
    await conn.execute(
        "INSERT INTO channel_states (session_id, value) VALUES (%s, %s) "
        "ON CONFLICT (session_id) DO UPDATE SET value = excluded.value",
        (session_id, encode(value)),
    )


async def create_at_address(
    conn: Connection,
    record: SessionRecord,
    first: NewDelivery,
    address: str,
    replacing: str | None,
    channel_state: str | None,
    notify: tuple[str, str] | None,
) -> tuple[SessionRecord, bool]:
    """Create a session holding the address, or return the session that wins (see the store contract)."""
    async with transaction(conn):
        await _lock_address(conn, address)
        if record.operation_id is not None:
            existing = await _by_operation(conn, encode(record.operation_id))
            if existing is not None:
                return existing, False
        holder = await address_holder(conn, address)
        if holder is not None and holder != replacing:
            found = await get_session(conn, holder)
            assert found is not None  # the join found it
            return found, False
        session, created = await _create(conn, record, first, notify)
        if created:
            await _claim(conn, session.id, address)
            if channel_state is not None:
                await _put_channel_state(conn, session.id, channel_state)
        return session, created


async def claim_address(conn: Connection, session_id: str, address: str) -> str:
    """Claim an address for an active session (an alias); the holder afterwards."""
    async with transaction(conn):
        row = await _one(conn, "SELECT status FROM sessions WHERE id = %s FOR SHARE", (session_id,))
        if row is None or row[0] != "active":
            raise SessionNotActive(f"Session {session_id!r} is not active, so it cannot claim an address.")
        await _lock_address(conn, address)
        holder = await address_holder(conn, address)
        if holder is not None:
            return holder
        held = await _one(conn, "SELECT count(*) FROM addresses WHERE session_id = %s", (session_id,))
        if held is not None and int(held[0]) >= MAX_ADDRESSES:
            raise AddressLimitReached(session_id)
        await _claim(conn, session_id, address)
        return session_id


async def save_channel_state(conn: Connection, session_id: str, value: str) -> None:
    """Replace the channel state of an existing session."""
    async with transaction(conn):
        if await _one(conn, "SELECT 1 FROM sessions WHERE id = %s", (session_id,)) is None:
            raise SessionNotActive(f"Session {session_id!r} does not exist, so it has no channel state.")
        await _put_channel_state(conn, session_id, value)


# -- ownership --------------------------------------------------------------------------------


_NOW = "extract(epoch FROM clock_timestamp())"

_ACQUIRE = f"""
INSERT INTO owners AS o (session_id, owner, expires_at, fence) VALUES (%(session)s, %(owner)s, {_NOW} + %(ttl)s, 1)
ON CONFLICT (session_id) DO UPDATE SET
    owner = excluded.owner,
    expires_at = excluded.expires_at,
    fence = CASE WHEN o.owner = excluded.owner THEN o.fence ELSE o.fence + 1 END
WHERE o.owner = excluded.owner OR o.owner IS NULL OR o.expires_at <= {_NOW}
RETURNING fence
"""


async def acquire(conn: Connection, session_id: str, owner: str, ttl: float) -> int | None:
    """Take or renew the session's lease (timed by the database's clock, shared by every host)."""
    cursor = await execute(conn, _ACQUIRE, {"session": session_id, "owner": owner, "ttl": ttl})
    row = await cursor.fetchone()
    return None if row is None else int(row[0])


async def release(conn: Connection, session_id: str, owner: str) -> None:
    """Give up the lease when `owner` holds it."""
    await conn.execute(
        "UPDATE owners SET owner = NULL, expires_at = 0 WHERE session_id = %s AND owner = %s", (session_id, owner)
    )


LEASE_OWNERS = f"SELECT DISTINCT owner FROM owners WHERE owner IS NOT NULL AND expires_at > {_NOW} ORDER BY owner"


async def expire_leases(conn: Connection, owner: str) -> None:
    """End every unexpired lease `owner` holds (an owner known to be dead)."""
    await conn.execute(f"UPDATE owners SET expires_at = {_NOW} WHERE owner = %s AND expires_at > {_NOW}", (owner,))


EXPIRED_SESSIONS = f"""
SELECT s.id FROM sessions s LEFT JOIN owners o ON o.session_id = s.id
WHERE s.status = 'active' AND s.deadline <= %s AND (o.owner IS NULL OR o.expires_at <= {_NOW})
ORDER BY s.deadline, s.row_seq LIMIT %s
"""


async def claim_schedule_fire(conn: Connection, schedule: str, at: float) -> ScheduleClaim:
    """Claim a fire time later than the schedule's last one (see `Store.claim_schedule_fire`).

    The schedule's row is created first (its `last_fire` NULL: never fired), so the claim can lock
    it: two processes claiming one fire time queue on that lock, and the second sees the first's.
    """
    async with transaction(conn):
        await conn.execute(
            f"INSERT INTO schedule_fires (schedule, last_fire, claimed_at) VALUES (%s, NULL, {_NOW}) "
            "ON CONFLICT (schedule) DO NOTHING",
            (schedule,),
        )
        row = await _one(conn, "SELECT last_fire FROM schedule_fires WHERE schedule = %s FOR UPDATE", (schedule,))
        previous = None if row is None or row[0] is None else float(row[0])
        if previous is not None and at <= previous:
            return ScheduleClaim(claimed=False, previous=previous)
        await conn.execute(
            f"UPDATE schedule_fires SET last_fire = %s, claimed_at = {_NOW} WHERE schedule = %s", (at, schedule)
        )
    return ScheduleClaim(claimed=True, previous=previous)


"""Active sessions past their deadline that no unexpired lease holds (leases timed by the database's clock)."""
