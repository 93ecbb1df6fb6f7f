"""The SQLite store's leases: who executes a session (an owner and a fencing token), and for how long.

The local world has one serving process, so its leases only matter across a restart: a lease a
killed process held is found expired (`orphaned_sessions`) or ended at once when its owner is a
dead process of this machine (`lease_owners`, `expire_leases`; see `eve_runtime.sessions.ownership`).
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["acquire", "expire_leases", "lease_owners", "orphaned_sessions", "release"]


def acquire(conn: sqlite3.Connection, session_id: str, owner: str, ttl: float) -> int | None:
    """Take or renew the session's lease; the fencing token, or None while another owner holds it."""
    now = time.time()
    lease = conn.execute("SELECT owner, expires_at, fence FROM owners WHERE session_id = ?", (session_id,)).fetchone()
    if lease is None:
        conn.execute(
            "INSERT INTO owners (session_id, owner, expires_at, fence) VALUES (?, ?, ?, 1)",
            (session_id, owner, now + ttl),
        )
        return 1
    holder, expires_at, fence = lease[0], float(lease[1]), int(lease[2])
    if holder == owner:
        conn.execute("UPDATE owners SET expires_at = ? WHERE session_id = ?", (now + ttl, session_id))
        return fence
    if holder is not None and expires_at > now:
        return None
    conn.execute(
        "UPDATE owners SET owner = ?, expires_at = ?, fence = ? WHERE session_id = ?",
        (owner, now + ttl, fence + 1, session_id),
    )
    return fence + 1


def release(conn: sqlite3.Connection, session_id: str, owner: str) -> None:
    """Give up the lease when `owner` holds it."""
    conn.execute(
        "UPDATE owners SET owner = NULL, expires_at = 0 WHERE session_id = ? AND owner = ?", (session_id, owner)
    )


def orphaned_sessions(conn: sqlite3.Connection) -> list[str]:
    """Active sessions whose lease expired without a release, oldest first."""
    rows = conn.execute(
        "SELECT s.id FROM owners o JOIN sessions s ON s.id = o.session_id "
        "WHERE o.owner IS NOT NULL AND o.expires_at <= ? AND s.status = 'active' ORDER BY s.created_at, s.rowid",
        (time.time(),),
    ).fetchall()
    return [str(row[0]) for row in rows]


def lease_owners(conn: sqlite3.Connection) -> list[str]:
    """The owners holding a lease now (see `Store.lease_owners`)."""
    query = "SELECT DISTINCT owner FROM owners WHERE owner IS NOT NULL AND expires_at > ? ORDER BY owner"
    return [str(row[0]) for row in conn.execute(query, (time.time(),))]


def expire_leases(conn: sqlite3.Connection, owner: str) -> None:
    """End every lease `owner` holds (see `Store.expire_leases`)."""
    now = time.time()
    conn.execute("UPDATE owners SET expires_at = ? WHERE owner = ? AND expires_at > ?", (now, owner, now))
