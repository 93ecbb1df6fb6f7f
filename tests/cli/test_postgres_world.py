"""`eve start --world postgres` as real processes on a Postgres schema of their own.

A turn end to end, configuration errors (exit 1, the flag and the fix named, never a traceback or
the password), kill -9 mid-turn and restart, and a deployment handoff.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests import pg
from tests.cli.test_redeploy import VISIT, WEATHER, built, converse
from tests.cli.test_serve import TOKEN, _converse, _eve, serving
from tests.crash.harness import Client, EveProcess, check, read_ledger, scaffold
from tests.helpers import write_files
from tests.server.support import scaffold_app

pytestmark = [pytest.mark.scenario, pytest.mark.postgres]

PASSWORD = "pw-never-logged-5b1d"
HEADERS = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def schema() -> Iterator[str]:
    with pg.fresh_schema() as name:
        yield name


def _url(schema: str) -> str:
    """The test server's URL with a password (trust auth ignores it) and the schema as search path."""
    return pg.schema_url(schema).replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")


def _recorded_build(schema: str, sid: str) -> str:
    with psycopg.connect(pg.database_url()) as conn:
        row = conn.execute(f'SELECT deployment FROM "{schema}".sessions WHERE id = %s', (sid,)).fetchone()
    assert row is not None
    return str(row[0])


def test_start_serves_a_turn_from_postgres(tmp_path: Path, schema: str) -> None:
    app = scaffold_app(tmp_path / "weather-agent")
    env = {"EVE_AUTH_TOKEN": TOKEN, "EVE_WORLD": "postgres", "EVE_DATABASE_URL": _url(schema)}
    with serving(app, "start", env=env) as server:
        events = _converse(server.url, HEADERS)
        assert events[-1]["type"] == "session.waiting"
        reply = next(e for e in events if e["type"] == "message.completed")
        assert reply["data"]["message"].startswith("get_weather -> ")
        server.stop()
    assert server.returncode == 0, server.stderr
    assert f"schema {schema}" in server.stderr
    assert PASSWORD not in server.stderr and server.stdout_rest == ""
    assert not (app / ".eve" / "workflow-data").exists()  # nothing went to the local world
    with psycopg.connect(pg.database_url()) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{schema}".sessions').fetchone()
    assert row is not None and row[0] == 1


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (None, "needs a database: pass --database-url"),
        ("not a url = = =", "is not a Postgres connection string"),
        (f"postgresql://eve:{PASSWORD}@127.0.0.1:1/db", "Check --database-url"),
    ],
    ids=["missing", "malformed", "unreachable"],
)
def test_configuration_errors_exit_1_with_the_fix(tmp_path: Path, url: str | None, expected: str) -> None:
    app = scaffold_app(tmp_path / "weather-agent")
    args = ["start", "--port", "0", "--world", "postgres"] + ([] if url is None else ["--database-url", url])
    result = _eve(app, *args)
    assert result.returncode == 1, result.stderr
    assert expected in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr and PASSWORD not in result.stderr
    assert result.stdout == ""


def test_kill_mid_turn_then_restart_resumes_the_turn(tmp_path: Path, schema: str) -> None:
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(
        app, ledger, args=["--world", "postgres", "--database-url", _url(schema)], env={"EVE_LEASE_SECONDS": "1"}
    )
    client = Client(server)
    try:
        server.start(crashpoint="after-actions-requested")
        created = client.create("op-1", '/say hello\n/call record {"label": "a"}')
        assert server.wait_dead(), "the process did not die mid-turn"
        server.kill()
        server.start()
        if created.outcome != "ok":
            created = client.create("op-1", '/say hello\n/call record {"label": "a"}')
        assert created.outcome == "ok" and created.session is not None
        client.wait_quiet(created.session, turns=1)
        follow_up = client.send(created.session, "/reply all good", "k-after")
        events = client.wait_quiet(created.session, turns=2, deliveries={follow_up.delivery or ""})
        report = check(client, [created.session], ledger)
        assert report.violations() == {}, report
        assert [line["label"] for line in read_ledger(ledger)].count("a") <= 1
        assert [e for e in events if e["type"] == "message.completed"][-1]["data"]["message"] == "all good"
    finally:
        server.kill()


def test_a_redeploy_moves_an_idle_session_on_postgres(tmp_path: Path, schema: str) -> None:
    app = scaffold_app(tmp_path / "weather-agent")
    write_files(
        app,
        {
            "agent/tools/visit.py": VISIT.format(extra="", touch="pass"),
            "agent/tools/get_weather.py": WEATHER.format(condition="Sunny"),
        },
    )
    env = {"EVE_AUTH_TOKEN": TOKEN}
    args = ("start", "--world", "postgres", "--database-url", _url(schema))
    with serving(app, *args, env=env) as server, httpx.Client(base_url=server.url, headers=HEADERS) as http:
        sid, _ = converse(http, None, "/call visit {}", 1)
        server.stop()
    first = built(app)
    assert _recorded_build(schema, sid) == first
    write_files(app, {"agent/tools/get_weather.py": WEATHER.format(condition="Rainy")})
    with serving(app, *args, env=env) as server, httpx.Client(base_url=server.url, headers=HEADERS) as http:
        _, seen = converse(http, sid, '/call visit {}\n/call get_weather {"city":"Paris"}', 2)
        server.stop()
    second = built(app)
    assert second != first and _recorded_build(schema, sid) == second
    results = [e["data"]["result"]["output"] for e in seen if e["type"] == "action.result"]
    assert sorted(results, key=str) == sorted([1, 2, {"city": "Paris", "condition": "Rainy"}], key=str)
    assert server.returncode == 0
