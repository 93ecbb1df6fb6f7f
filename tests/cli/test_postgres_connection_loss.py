"""A real `eve start --world postgres` whose connections are cut (`pg_terminate_backend`) mid-turn and mid-follow.

No request answers 500, every accepted message is answered, and a live follow (the Python
client) sees every event exactly once. While the database refuses connections altogether, a
follow ends with the `stream.interrupted` control record (not a normal end), requests answer 503
`store_unavailable`, and the client resumes from its cursor once the database is back.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql

from eve_runtime.client import EveClient
from eve_runtime.project.compiler import compile_app
from eve_runtime.server.stream import StreamOptions
from eve_runtime.store import PostgresStore
from tests import pg
from tests.crash.harness import TOKEN, Client, EveProcess, check, scaffold
from tests.server.support import LiveServer, scaffold_app

pytestmark = [pytest.mark.scenario, pytest.mark.postgres]


class Follower(threading.Thread):
    """Follows one session with the Python client until told to stop, keeping every event it yields."""

    def __init__(self, url: str, session: str, token: str | None = TOKEN) -> None:
        super().__init__(daemon=True)
        self.client = EveClient(url, token=token, max_reconnects=30)
        self.session = session
        self.events: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            for event in self.client.stream(self.session, 0):
                self.events.append(event)
                if self.stopping.is_set():
                    return
        except BaseException as exc:  # reported to the test
            self.error = exc

    def wait_for(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline and self.error is None:
            time.sleep(0.02)
        assert self.error is None, self.error
        assert len(self.events) >= count, f"the follow saw {len(self.events)} of {count} events"


class Cutter(threading.Thread):
    """Terminates every backend of one application name, again and again, until stopped."""

    def __init__(self, name: str, every: float = 0.15) -> None:
        super().__init__(daemon=True)
        self.name, self.every = name, every
        self.stopping = threading.Event()
        self.killed = 0

    def run(self) -> None:
        while not self.stopping.wait(self.every):
            self.killed += pg.terminate_backends(self.name)


def _send_until_accepted(client: Client, session: str, message: str, key: str, statuses: list[int]) -> str:
    """Send with an idempotency key, retrying a 503 (what a client does after `Retry-After`); the delivery id."""
    for _ in range(20):
        op = client.send(session, message, key, policy="queue")
        statuses.append(op.status or 0)
        if op.outcome == "ok" and op.delivery is not None:
            return op.delivery
        assert op.status in (None, 503), f"{op.status} for {key}"  # never a 500
        time.sleep(0.2)
    raise AssertionError(f"{key} was never accepted")


def test_backends_killed_mid_turn_and_mid_follow_cost_no_request_and_no_event(tmp_path: Path) -> None:
    name = f"eve-cut-{uuid.uuid4().hex[:8]}"
    with pg.fresh_schema() as schema:
        app = scaffold(tmp_path)
        url = f"{pg.schema_url(schema)}&application_name={name}"
        server = EveProcess(app, tmp_path / "ledger.ndjson", args=["--world", "postgres", "--database-url", url])
        server.start()
        try:
            client = Client(server)
            created = client.create("op-cut", "/reply hello")
            assert created.outcome == "ok" and created.session is not None
            session = created.session
            follower = Follower(server.url, session)
            follower.start()
            cutter = Cutter(name)
            cutter.start()
            statuses: list[int] = []
            sent = set()
            for n in range(12):
                message = f'/delay 20\n/say step {n}\n/call record {{"label": "c{n}", "seconds": 0.05}}'
                sent.add(_send_until_accepted(client, session, message, f"cut-{n}", statuses))
                time.sleep(0.1)
            time.sleep(1.0)  # cut a little longer, while the turns run
            cutter.stopping.set()
            cutter.join()
            assert cutter.killed >= 10, cutter.killed  # the cuts landed
            events = client.wait_quiet(session, turns=13, deliveries=sent, timeout=60)
            follower.wait_for(len(events))
            follower.stopping.set()
            assert [e["meta"]["id"] for e in follower.events[: len(events)]] == [e["meta"]["id"] for e in events]
            assert 500 not in statuses and all(s in (202, 503) for s in statuses), statuses
            assert statuses.count(503) <= 2, statuses  # a retry on a new connection, not a refusal, is the rule
            report = check(client, [session], server.ledger)
            assert report.violations() == {}, report
        finally:
            server.kill()


def _set_login(role: str, allowed: bool) -> None:
    with psycopg.connect(pg.database_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE {} " + ("LOGIN" if allowed else "NOLOGIN")).format(sql.Identifier(role)))


@pytest.fixture
def role() -> Iterator[str]:
    """A login role of its own, so the test can lock it out of the database and let it back in."""
    pg.require()
    name = f"eve_out_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg.database_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN SUPERUSER").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with psycopg.connect(pg.database_url(), autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,))
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def _follow_through_an_outage(url: str, session: str, start: int, role: str) -> list[bytes]:
    """Open a live follow, lock the role out and cut its connections; the lines the follow sent until it ended."""
    with httpx.stream(
        "GET", f"{url}/eve/v1/session/{session}/stream", params={"startIndex": str(start)}, timeout=30
    ) as response:
        assert response.status_code == 200
        chunks = response.iter_bytes()
        body = next(chunks)  # the opening newline: the follow is live
        _set_login(role, False)
        pg.terminate_backends(role)
        body += b"".join(chunks)
    return [line for line in body.split(b"\n") if line.strip()]


def test_a_follow_whose_store_fails_says_so_and_the_client_resumes(tmp_path: Path, role: str) -> None:
    compiled = compile_app(scaffold_app(tmp_path / "weather-agent"), write=False)
    assert compiled.ok and compiled.root is not None, compiled.diagnostics
    with pg.fresh_schema() as schema:
        user_url = psycopg.conninfo.make_conninfo(pg.database_url(), user=role)
        store = PostgresStore(user_url, schema=schema, application_name=role, pool_timeout=0.5)
        options = StreamOptions(heartbeat_interval=0.1, lease_duration=30, idle_check=0.2)
        with LiveServer(compiled.root, compiled.manifest, store=store, stream_options=options) as live:
            with httpx.Client(base_url=live.url) as http:
                created = http.post("/eve/v1/session", json={"message": "/reply one"})
                assert created.status_code == 202
                session = created.json()["sessionId"]
                follower = Follower(live.url, session, token=None)
                follower.start()
                follower.wait_for(5)
                while follower.events[-1]["type"] != "session.waiting":
                    time.sleep(0.05)
                lines = _follow_through_an_outage(live.url, session, len(follower.events), role)
                assert json.loads(lines[-1]) == {
                    "$eve": "stream.interrupted",
                    "version": 1,
                    "code": "store_unavailable",
                }
                refused = http.post(f"/eve/v1/session/{session}", json={"message": "/reply two"})
                assert refused.status_code == 503 and refused.json()["code"] == "store_unavailable"
                assert refused.headers["retry-after"].isdigit()
                health = http.get("/eve/v1/health")
                assert health.status_code == 503 and health.json()["status"] == "degraded"
                time.sleep(1.0)  # the follow fails its reads and reconnects meanwhile
                assert follower.error is None and follower.is_alive()
                _set_login(role, True)
                deadline = time.monotonic() + 20
                while (
                    accepted := http.post(f"/eve/v1/session/{session}", json={"message": "/reply two"})
                ).status_code != 202:
                    assert accepted.status_code == 503 and time.monotonic() < deadline, accepted.text
                    time.sleep(float(accepted.headers["retry-after"]) / 10)
                assert http.get("/eve/v1/health").json()["status"] == "ready"
                deadline = time.monotonic() + 20
                while not any(e.get("data", {}).get("message") == "two" for e in follower.events):
                    assert time.monotonic() < deadline and follower.error is None, follower.error
                    time.sleep(0.05)
                follower.stopping.set()
                bounded = http.get(f"/eve/v1/session/{session}/stream", params={"follow": "false"})
                ids = [json.loads(line)["meta"]["id"] for line in bounded.content.split(b"\n") if line.strip()]
                assert [e["meta"]["id"] for e in follower.events] == ids[: len(follower.events)]
