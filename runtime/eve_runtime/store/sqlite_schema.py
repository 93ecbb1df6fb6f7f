"""The SQLite store's schema, connection settings and value encodings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from eve_runtime.store.base import StoreError

__all__ = [
    "DATABASE_NAME",
    "KEPT_EVENTS",
    "SCHEMA_VERSION",
    "STREAMED_TYPES",
    "connect",
    "ensure_schema",
    "from_text",
    "to_text",
]

DATABASE_NAME = "eve.sqlite3"
SCHEMA_VERSION = 6
"""Stored in `PRAGMA user_version`; a database with a higher version was written by a newer eve."""

STREAMED_TYPES = ("action.input.appended", "message.appended", "reasoning.appended")
"""The streamed delta events (`events.catalog.DELTA_FIELDS`, which this layer may not import)."""
KEPT_EVENTS = "type NOT IN (" + ", ".join(f"'{t}'" for t in STREAMED_TYPES) + ")"
"""The events but streamed deltas, as SQL: the partial index `events_kept` holds them (schema 6).

Recovery reads a turn's events after its checkpoint without their deltas: through this index it
reads the few it needs, not every delta the turn streamed (a 1,000-session restart spent 0.2-0.4 s
of the store's thread stepping over 110,000 deltas). Only a query naming this very condition, not
bound values, can use it."""

_BUSY_TIMEOUT_MS = 10_000

_SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    created_at REAL NOT NULL,
    eve_version TEXT NOT NULL,
    status TEXT NOT NULL,
    deadline REAL,
    operation_id TEXT
);
CREATE INDEX sessions_by_status ON sessions (status, created_at);
CREATE TABLE events (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    type TEXT NOT NULL,
    line BLOB NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE history (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE checkpoints (
    session_id TEXT PRIMARY KEY,
    state TEXT NOT NULL
);
CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    idempotency_key TEXT,
    created_at REAL NOT NULL,
    consumed INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX deliveries_by_seq ON deliveries (session_id, seq);
CREATE INDEX deliveries_pending ON deliveries (session_id, seq) WHERE consumed = 0;
CREATE TABLE idempotency_keys (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (session_id, seq);
CREATE TABLE operations (
    operation_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
);
CREATE TABLE owners (
    session_id TEXT PRIMARY KEY,
    owner TEXT,
    expires_at REAL NOT NULL,
    fence INTEGER NOT NULL
);
"""

_MIGRATIONS = {
    2: """
ALTER TABLE sessions ADD COLUMN deployment TEXT;
""",
    3: """
CREATE TABLE addresses (
    address TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
);
CREATE INDEX addresses_by_session ON addresses (session_id);
""",
    4: """
CREATE TABLE channel_states (
    session_id TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
""",
    5: """
CREATE TABLE schedule_fires (
    schedule TEXT PRIMARY KEY,
    last_fire REAL NOT NULL,
    claimed_at REAL NOT NULL
);
""",
    6: f"""
CREATE INDEX IF NOT EXISTS events_kept ON events (session_id, idx) WHERE {KEPT_EVENTS};
""",
}
"""What each schema version adds to the one before it (a new database runs them all)."""


def connect(path: Path) -> sqlite3.Connection:
    """Open a connection with eve's settings: WAL, `synchronous=FULL`, explicit transactions.

    Raises:
        StoreError: The database cannot be opened or is not in WAL mode.
    """
    try:
        # isolation_level=None: the store issues BEGIN/COMMIT itself (group commit, savepoints).
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"Cannot open the eve store database {str(path)!r}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(
                f"The eve store database {str(path)!r} cannot use write-ahead logging (journal mode {mode!r}): "
                "put the data directory on a local file system."
            )
        conn.execute("PRAGMA synchronous = FULL")
    except BaseException as exc:
        conn.close()
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"Cannot open the eve store database {str(path)!r}: {exc}") from exc
        raise
    return conn


def ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the tables of a new database, bring an older one up to date, or refuse a newer one.

    Raises:
        StoreError: The database was written by a newer eve.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"The eve store database {str(path)!r} has schema version {version}, but this eve only knows "
            f"versions up to {SCHEMA_VERSION}: it was written by a newer eve. Upgrade eve to open it."
        )
    if version == SCHEMA_VERSION:
        return
    scripts = ([_SCHEMA] if version == 0 else []) + [
        _MIGRATIONS[v] for v in range(max(version, 1) + 1, SCHEMA_VERSION + 1)
    ]
    conn.execute("BEGIN IMMEDIATE")
    try:
        for script in scripts:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def to_text(value: str) -> str | bytes:
    """A string as SQLite can store it: itself, or its UTF-8 bytes when it holds lone surrogates.

    Python's sqlite3 refuses to bind strings that are not valid UTF-8; such strings are stored as
    blobs encoded with `surrogatepass`, which [`from_text`][eve_runtime.store.sqlite_schema.from_text]
    turns back into the same string.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")
    return value


def from_text(value: str | bytes) -> str:
    """The string [`to_text`][eve_runtime.store.sqlite_schema.to_text] stored."""
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value
