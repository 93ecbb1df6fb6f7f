"""Worlds: where sessions live. `local` is SQLite in `.eve/workflow-data`; `postgres` is one database.

[`open_world`][eve_runtime.serving.worlds.open_world] opens the store of a world, or explains, in one
message that names the flag and the fix, why it cannot: no database URL, a URL that is not one,
a server that does not answer. A database URL may hold a password: no message here carries it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from eve_runtime.errors import UserError
from eve_runtime.store.base import Store, StoreError, StoreLocked
from eve_runtime.store.sqlite import DEFAULT_MIN_FREE_MB, SqliteStore

if TYPE_CHECKING:
    from eve_runtime.store.postgres import PostgresStore

__all__ = ["DEFAULT_LEASE_SECONDS", "WORLDS", "WorldUnavailable", "lease_seconds", "min_free_mb", "open_world"]

WORLDS = ("local", "postgres")
DEFAULT_LEASE_SECONDS = 15.0
"""How long a process owns a session without renewing its lease (Postgres world)."""

logger = logging.getLogger("eve.serve")

NO_URL = (
    "The Postgres world needs a database: pass --database-url postgresql://USER:PASSWORD@HOST:5432/DBNAME "
    "(or set EVE_DATABASE_URL)."
)
BAD_URL = (
    "The database URL (--database-url or EVE_DATABASE_URL) is not a Postgres connection string. Use "
    "postgresql://USER:PASSWORD@HOST:5432/DBNAME (add ?options=-csearch_path%3DSCHEMA for another schema than public)."
)
NO_DRIVER = (
    "The Postgres world needs psycopg, which is not installed: install eve with its postgres extra "
    "(pip install 'eve-framework[postgres]')."
)
UNREACHABLE_FIX = (
    "Check --database-url (or EVE_DATABASE_URL): the server must be running and reachable from here, and the "
    "user allowed to connect to that database."
)


class WorldUnavailable(UserError):
    """The world's store cannot be opened (the message says why and what to do)."""


def lease_seconds() -> float:
    """The lease of a session's owner in the Postgres world: `EVE_LEASE_SECONDS`, else 15 seconds.

    Raises:
        WorldUnavailable: `EVE_LEASE_SECONDS` is not a positive number.
    """
    raw = os.environ.get("EVE_LEASE_SECONDS", "").strip()
    if not raw:
        return DEFAULT_LEASE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value != value or value == float("inf"):
        raise WorldUnavailable(f"EVE_LEASE_SECONDS={raw!r} is not a positive number of seconds (default 15).")
    return value


def min_free_mb() -> float:
    """The free space under which the local world refuses new work: `EVE_MIN_FREE_MB`, else 16 (0: no floor).

    Raises:
        WorldUnavailable: `EVE_MIN_FREE_MB` is not a number of megabytes (0 or more).
    """
    raw = os.environ.get("EVE_MIN_FREE_MB", "").strip()
    if not raw:
        return DEFAULT_MIN_FREE_MB
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise WorldUnavailable(
            f"EVE_MIN_FREE_MB={raw!r} is not a number of megabytes: set it to 0 or more (default 16; 0 turns the "
            "free-space floor off)."
        )
    return value


async def open_world(world: str, database_url: str | None, data_dir: Path) -> Store:
    """Open the store of `world` (`local`: SQLite in `data_dir`; `postgres`: `database_url`).

    Raises:
        WorldUnavailable: The world is unknown, or its store cannot be opened.
    """
    if world == "local":
        if database_url:
            logger.info("the local world ignores the database URL")
        store = SqliteStore(data_dir, min_free_mb=min_free_mb())
        try:
            await store.open()
        except StoreLocked as exc:
            raise WorldUnavailable(str(exc)) from None
        return store
    if world == "postgres":
        return await _open_postgres(database_url)
    raise WorldUnavailable(f"Unknown world {world!r}: choose 'local' or 'postgres'.")


async def _open_postgres(url: str | None) -> PostgresStore:
    if not url or not url.strip():
        raise WorldUnavailable(NO_URL)
    try:
        from psycopg import Error as PsycopgError, conninfo

        from eve_runtime.store.postgres import PostgresStore
    except ImportError:
        raise WorldUnavailable(NO_DRIVER) from None
    try:
        conninfo.conninfo_to_dict(url)
    except PsycopgError:
        raise WorldUnavailable(BAD_URL) from None
    store = PostgresStore(url)
    try:
        await store.open()
    except StoreError as exc:
        raise WorldUnavailable(f"{exc}\n{UNREACHABLE_FIX}") from None
    return store
