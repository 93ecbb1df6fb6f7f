"""The PostgreSQL server the tests use (127.0.0.1:5432, database `test`), and a schema per test.

Set `EVE_TEST_DATABASE_URL` to use another server. When none answers, Postgres tests skip with
the reason (CI runs where one answers).
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def database_url() -> str:
    """The test server's connection string."""
    return os.environ.get("EVE_TEST_DATABASE_URL") or DEFAULT_URL


@functools.cache
def unavailable() -> str | None:
    """Why the test server cannot be used, or None when it can."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the postgres extra is part of `make install`
        return "psycopg is not installed (pip install -e '.[postgres]')"
    try:
        with psycopg.connect(database_url(), connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL is unreachable at {database_url()} ({str(exc).strip().splitlines()[0]})"
    return None


def require() -> None:
    """Skip the calling test when the test server cannot be used."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)


def schema_url(schema: str) -> str:
    """The test server's connection string with `schema` as the search path."""
    url = database_url()
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A new, empty schema on the test server (dropped afterwards); skips when there is no server."""
    require()
    import psycopg
    from psycopg import sql

    name = f"eve_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with psycopg.connect(database_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


def terminate_backends(application_name: str) -> int:
    """Kill the server processes of every connection named `application_name` (`pg_terminate_backend`).

    Called from a connection of its own, as an administrator or a failover would cut them. Returns
    how many backends it terminated.
    """
    import psycopg

    with psycopg.connect(database_url(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s "
            "AND pid <> pg_backend_pid()",
            (application_name,),
        ).fetchall()
    return sum(1 for (killed,) in rows if killed)
