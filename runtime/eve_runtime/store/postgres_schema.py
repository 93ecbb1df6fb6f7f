"""The Postgres store's schema: the SQLite store's tables, its commit function, and value encodings.

The tables are those of the SQLite store (`sqlite_schema.py`), with two differences Postgres
needs: strings a caller chooses freely (operation ids, idempotency keys, history messages,
checkpoints, channel state, addresses) are stored as `BYTEA` holding their UTF-8 encoding with
`surrogatepass` (Postgres text refuses NUL and lone surrogates), and the insertion order SQLite
keeps in `rowid` is a `BIGSERIAL` column. The schema version is kept in `eve_meta`.

Accepting a delivery is one call of the `eve_enqueue` PL/pgSQL function (one round trip), and a
commit one call of `eve_commit`, which locks the session row, checks the fencing token against
`owners` (locked for share, so a takeover waits for the commit in flight), checks the first event
index, writes everything, and `NOTIFY`s readers.
"""

from __future__ import annotations

import hashlib

import psycopg
from psycopg import sql

from eve_runtime.store.base import StoreError

__all__ = [
    "SCHEMA_VERSION",
    "SQLSTATE_DELIVERY_EXISTS",
    "SQLSTATE_INDEX_CONFLICT",
    "SQLSTATE_MISSING_SESSION",
    "SQLSTATE_NOT_ACTIVE",
    "SQLSTATE_OWNERSHIP_LOST",
    "channel_names",
    "decode",
    "encode",
    "ensure_schema",
    "lock_key",
    "prepare_schema",
    "use_schema",
]

SCHEMA_VERSION = 4
"""Stored in `eve_meta`; a schema with a higher version was written by a newer eve.

Every table and index is created `IF NOT EXISTS`, so opening an older schema adds what it lacks:
2 added `sessions_by_deadline`, 3 the `schedule_fires` table, 4 the pending deliveries `eve_enqueue`
returns after its first row (an older eve reads only that one)."""

SQLSTATE_MISSING_SESSION = "EV404"
SQLSTATE_OWNERSHIP_LOST = "EV409"
SQLSTATE_INDEX_CONFLICT = "EV412"
SQLSTATE_NOT_ACTIVE = "EV410"
SQLSTATE_DELIVERY_EXISTS = "EV422"

_TABLES = """
CREATE TABLE IF NOT EXISTS eve_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    eve_version TEXT NOT NULL,
    status TEXT NOT NULL,
    deadline DOUBLE PRECISION,
    operation_id BYTEA,
    deployment TEXT,
    row_seq BIGSERIAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_status ON sessions (status, created_at, row_seq);
CREATE INDEX IF NOT EXISTS sessions_by_deadline ON sessions (deadline) WHERE status = 'active';
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    type TEXT NOT NULL,
    line BYTEA NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS history (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    message BYTEA NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT PRIMARY KEY,
    state BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    idempotency_key BYTEA,
    created_at DOUBLE PRECISION NOT NULL,
    consumed BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX IF NOT EXISTS deliveries_by_seq ON deliveries (session_id, seq);
CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (session_id, seq) WHERE NOT consumed;
CREATE TABLE IF NOT EXISTS idempotency_keys (
    session_id TEXT NOT NULL,
    key BYTEA NOT NULL,
    delivery_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (session_id, seq);
CREATE TABLE IF NOT EXISTS operations (
    operation_id BYTEA PRIMARY KEY,
    session_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS owners (
    session_id TEXT PRIMARY KEY,
    owner TEXT,
    expires_at DOUBLE PRECISION NOT NULL,
    fence BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS owners_by_expiry ON owners (expires_at);
CREATE TABLE IF NOT EXISTS addresses (
    address BYTEA PRIMARY KEY,
    session_id TEXT NOT NULL,
    claim_seq BIGSERIAL NOT NULL
);
CREATE INDEX IF NOT EXISTS addresses_by_session ON addresses (session_id, claim_seq);
CREATE TABLE IF NOT EXISTS channel_states (
    session_id TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS schedule_fires (
    schedule TEXT PRIMARY KEY,
    last_fire DOUBLE PRECISION,
    claimed_at DOUBLE PRECISION NOT NULL
)
"""

_COMMIT_FUNCTION = """
CREATE OR REPLACE FUNCTION eve_commit(
    p_session TEXT, p_fence BIGINT, p_first BIGINT, p_types TEXT[], p_lines BYTEA[], p_history BYTEA[],
    p_replace BOOLEAN, p_checkpoint BYTEA, p_consumed TEXT[], p_status TEXT, p_handoff BOOLEAN,
    p_deployment TEXT, p_deadline DOUBLE PRECISION, p_channel TEXT
) RETURNS VOID LANGUAGE plpgsql AS $fn$
DECLARE
    v_owner TEXT;
    v_fence BIGINT;
    v_next BIGINT;
BEGIN
    PERFORM 1 FROM sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'Session % does not exist.', quote_literal(p_session) USING ERRCODE = 'EV404';
    END IF;
    IF p_fence IS NOT NULL THEN
        SELECT owner, fence INTO v_owner, v_fence FROM owners WHERE session_id = p_session FOR SHARE;
        IF v_owner IS NULL OR v_fence <> p_fence THEN
            RAISE EXCEPTION '%', CASE WHEN v_owner IS NULL THEN 'none' ELSE v_fence::TEXT END
                USING ERRCODE = 'EV409';
        END IF;
    END IF;
    IF cardinality(p_lines) > 0 THEN
        SELECT coalesce(max(idx) + 1, 0) INTO v_next FROM events WHERE session_id = p_session;
        IF v_next <> p_first THEN
            RAISE EXCEPTION '%', v_next USING ERRCODE = 'EV412';
        END IF;
        INSERT INTO events (session_id, idx, type, line)
            SELECT p_session, p_first + u.o - 1, u.t, u.l FROM unnest(p_types, p_lines) WITH ORDINALITY AS u(t, l, o);
    END IF;
    IF p_replace THEN
        DELETE FROM history WHERE session_id = p_session;
    END IF;
    IF cardinality(p_history) > 0 THEN
        SELECT coalesce(max(seq) + 1, 0) INTO v_next FROM history WHERE session_id = p_session;
        INSERT INTO history (session_id, seq, message)
            SELECT p_session, v_next + u.o - 1, u.m FROM unnest(p_history) WITH ORDINALITY AS u(m, o);
    END IF;
    IF p_checkpoint IS NOT NULL THEN
        INSERT INTO checkpoints (session_id, state) VALUES (p_session, p_checkpoint)
            ON CONFLICT (session_id) DO UPDATE SET state = excluded.state;
    END IF;
    IF cardinality(p_consumed) > 0 THEN
        UPDATE deliveries SET consumed = TRUE WHERE session_id = p_session AND id = ANY (p_consumed);
    END IF;
    IF p_status IS NOT NULL THEN
        UPDATE sessions SET status = p_status WHERE id = p_session;
    END IF;
    IF p_handoff THEN
        UPDATE sessions SET deployment = p_deployment, deadline = p_deadline WHERE id = p_session;
    END IF;
    IF p_channel IS NOT NULL AND cardinality(p_lines) > 0 THEN
        PERFORM pg_notify(p_channel, p_session);
    END IF;
END
$fn$
"""


_ENQUEUE_FUNCTION = """
CREATE OR REPLACE FUNCTION eve_enqueue(
    p_session TEXT, p_id TEXT, p_kind TEXT, p_payload TEXT, p_key BYTEA, p_now DOUBLE PRECISION, p_window INTEGER,
    p_channel TEXT, p_tag TEXT
) RETURNS TABLE (
    duplicate BOOLEAN, id TEXT, session_id TEXT, seq BIGINT, kind TEXT, payload TEXT, idempotency_key BYTEA,
    created_at DOUBLE PRECISION, consumed BOOLEAN
) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
    v_status TEXT;
    v_seq BIGINT;
    v_others INTEGER;
BEGIN
    SELECT s.status INTO v_status FROM sessions s WHERE s.id = p_session FOR UPDATE;
    IF v_status IS DISTINCT FROM 'active' THEN
        RAISE EXCEPTION '%', coalesce(v_status, '') USING ERRCODE = 'EV410';
    END IF;
    IF p_key IS NOT NULL THEN
        RETURN QUERY SELECT TRUE, d.id, d.session_id, d.seq, d.kind, d.payload, d.idempotency_key, d.created_at,
            d.consumed FROM deliveries d WHERE d.id =
            (SELECT k.delivery_id FROM idempotency_keys k WHERE k.session_id = p_session AND k.key = p_key);
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    SELECT coalesce(max(d.seq) + 1, 0) INTO v_seq FROM deliveries d WHERE d.session_id = p_session;
    INSERT INTO deliveries (id, session_id, seq, kind, payload, idempotency_key, created_at, consumed)
        VALUES (p_id, p_session, v_seq, p_kind, p_payload, p_key, p_now, FALSE) ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION '%', p_id USING ERRCODE = 'EV422';
    END IF;
    IF p_key IS NOT NULL THEN
        INSERT INTO idempotency_keys (session_id, key, delivery_id, seq) VALUES (p_session, p_key, p_id, v_seq);
        -- Keep the newest p_window keys: drop everything at or below the first one past it.
        DELETE FROM idempotency_keys k WHERE k.session_id = p_session AND k.seq <= (SELECT k2.seq
            FROM idempotency_keys k2 WHERE k2.session_id = p_session ORDER BY k2.seq DESC LIMIT 1 OFFSET p_window);
    END IF;
    IF p_channel IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_tag || ' ' || p_session);
    END IF;
    RETURN QUERY SELECT FALSE, p_id, p_session, v_seq, p_kind, p_payload, p_key, p_now, FALSE;
    -- The session's other pending deliveries (duplicate NULL), so the actor need not read them; past
    -- the first few, one row of NULLs instead (read them).
    SELECT count(*) INTO v_others FROM (SELECT 1 FROM deliveries d WHERE d.session_id = p_session AND NOT d.consumed
        AND d.id <> p_id LIMIT 9) AS o;
    IF v_others > 8 THEN
        RETURN QUERY SELECT NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT, NULL::TEXT, NULL::BYTEA,
            NULL::DOUBLE PRECISION, NULL::BOOLEAN;
    ELSIF v_others > 0 THEN
        RETURN QUERY SELECT NULL::BOOLEAN, d.id, d.session_id, d.seq, d.kind, d.payload, d.idempotency_key,
            d.created_at, d.consumed FROM deliveries d WHERE d.session_id = p_session AND NOT d.consumed
            AND d.id <> p_id ORDER BY d.seq;
    END IF;
END
$fn$
"""


def encode(value: str) -> bytes:
    """A string as stored in a `BYTEA` column (UTF-8, lone surrogates passed through)."""
    return value.encode("utf-8", "surrogatepass")


def decode(value: bytes | memoryview) -> str:
    """The string [`encode`][eve_runtime.store.postgres_schema.encode] stored."""
    return bytes(value).decode("utf-8", "surrogatepass")


def lock_key(*parts: str) -> int:
    """A signed 64-bit key for `pg_advisory_xact_lock`, derived from `parts`."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def channel_names(database: str, schema: str) -> tuple[str, str, str]:
    """The NOTIFY channels of one store (its database and schema): new events, new deliveries, watched streams."""
    tag = hashlib.sha256(f"{database}\x00{schema}".encode()).hexdigest()[:16]
    return f"eve_events_{tag}", f"eve_deliveries_{tag}", f"eve_watch_{tag}"


async def use_schema(conn: psycopg.AsyncConnection[tuple[object, ...]], schema: str) -> None:
    """Put `schema` first on the connection's search path."""
    await conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))


async def prepare_schema(
    conn: psycopg.AsyncConnection[tuple[object, ...]], schema: str | None, where: str
) -> tuple[str, str]:
    """Create `schema` when given and missing, else take the connection's; make its tables (`ensure_schema`).

    Returns the database's name and the schema's. `where` names the server in messages.

    Raises:
        StoreError: The search path names no schema that exists, or the schema is a newer eve's.
        psycopg.Error: The server failed (the caller says so without the password).
    """
    if schema is not None:
        async with conn.transaction():  # IF NOT EXISTS alone races when processes start together
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("eve-create-schema", schema),))
            await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        await use_schema(conn, schema)
    cursor = await conn.execute("SELECT current_database(), current_schema()")
    row = await cursor.fetchone()
    assert row is not None
    if row[1] is None:
        raise StoreError(
            f"The Postgres search path at {where} names no schema that exists: create the schema "
            "(CREATE SCHEMA name), or leave search_path out of the connection string to use 'public'."
        )
    database, current = str(row[0]), str(row[1])
    await ensure_schema(conn, current)
    return database, current


async def ensure_schema(conn: psycopg.AsyncConnection[tuple[object, ...]], schema: str) -> None:
    """Create the tables and the commit function when missing, or refuse a schema of a newer eve.

    Runs under a transaction-scoped advisory lock, so processes opening one store at once do not
    race on the DDL. `conn` must be in autocommit mode with `schema` first on its search path.

    Raises:
        StoreError: The schema was written by a newer eve.
    """
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("eve-schema", schema),))
        cursor = await conn.execute("SELECT to_regclass('eve_meta') IS NOT NULL")
        row = await cursor.fetchone()
        if row is not None and row[0]:
            cursor = await conn.execute("SELECT value FROM eve_meta WHERE key = 'schema_version'")
            found = await cursor.fetchone()
            version = 0 if found is None else int(str(found[0]))
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"The eve store in Postgres schema {schema!r} has schema version {version}, but this eve only "
                    f"knows versions up to {SCHEMA_VERSION}: it was written by a newer eve. Upgrade eve to open it."
                )
            if version == SCHEMA_VERSION:
                return
        for statement in _TABLES.split(";"):
            await conn.execute(statement)
        await conn.execute(_COMMIT_FUNCTION)
        await conn.execute(_ENQUEUE_FUNCTION)
        await conn.execute(
            "INSERT INTO eve_meta (key, value) VALUES ('schema_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )
