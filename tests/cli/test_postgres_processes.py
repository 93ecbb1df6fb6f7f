"""Two real `eve start --world postgres` processes on one database: each session runs in one owner at a time.

Messages sent to either process are all answered exactly once; a process killed with SIGKILL in
the middle of a turn leaves its lease to expire, and the other process takes the session over and
finishes the turn. Leases last one second here (`EVE_LEASE_SECONDS`).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import pg
from tests.crash.harness import TOKEN, Client, EveProcess, check, read_ledger, scaffold

pytestmark = [pytest.mark.scenario, pytest.mark.postgres]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[EveProcess, EveProcess]]:
    with pg.fresh_schema() as schema:
        app = scaffold(tmp_path)
        ledger = tmp_path / "ledger.ndjson"
        args = ["--world", "postgres", "--database-url", pg.schema_url(schema)]
        env = {"EVE_LEASE_SECONDS": "1"}
        a = EveProcess(app, ledger, args=args, env=env)
        b = EveProcess(app, ledger, args=args, env=env)
        try:
            a.start()
            b.start()
            yield a, b
        finally:
            a.kill()
            b.kill()


def _replies(events: list[dict[str, object]]) -> list[str]:
    return [str(e["data"]["message"]) for e in events if e["type"] == "message.completed"]  # type: ignore[index]


def test_messages_to_either_process_are_answered_exactly_once(pair: tuple[EveProcess, EveProcess]) -> None:
    a, b = pair
    clients = [Client(a), Client(b)]
    sessions: list[str] = []
    for n in range(3):
        created = clients[n % 2].create(f"op-{n}", f"/reply first {n}")
        assert created.outcome == "ok" and created.session is not None
        sessions.append(created.session)
    sent: dict[str, set[str]] = {s: set() for s in sessions}
    rounds = 4
    for round_ in range(rounds):
        for n, session in enumerate(sessions):
            op = clients[(round_ + n + 1) % 2].send(
                session, f"/reply r{round_} s{n}", f"k-{round_}-{n}", policy="queue"
            )
            assert op.outcome == "ok" and op.delivery is not None, op
            sent[session].add(op.delivery)
    for n, session in enumerate(sessions):
        events = clients[n % 2].wait_quiet(session, turns=rounds + 1, deliveries=sent[session], timeout=60)
        replies = Counter(_replies(events))
        expected = [f"first {n}"] + [f"r{r} s{n}" for r in range(rounds)]
        assert all(replies[text] == 1 for text in expected), replies
        assert sum(e["type"] == "turn.completed" for e in events) == rounds + 1
    report = check(clients[0], sessions, a.ledger)
    assert report.violations() == {}, report


def test_a_killed_owners_turn_is_finished_by_the_other_process(pair: tuple[EveProcess, EveProcess]) -> None:
    a, b = pair
    on_a, on_b = Client(a), Client(b)
    created = on_a.create("op-slow", '/say working on it\n/call record {"label": "slow", "seconds": 3}')
    assert created.outcome == "ok" and created.session is not None
    session = created.session
    deadline = time.monotonic() + 20
    while not read_ledger(a.ledger):  # the tool is running in A
        assert time.monotonic() < deadline, "the tool never started"
        time.sleep(0.05)
    assert {line["pid"] for line in read_ledger(a.ledger)} == {a.process.pid if a.process else -1}
    a.kill()
    events = on_b.wait_quiet(session, turns=1, timeout=30)
    terminals = [e["type"] for e in events if e["type"] in ("turn.completed", "turn.failed", "turn.cancelled")]
    assert terminals == ["turn.completed"], [e["type"] for e in events]
    assert [line["label"] for line in read_ledger(b.ledger)] == ["slow"]  # never run again
    follow_up = on_b.send(session, "/reply still here", "k-after")
    events = on_b.wait_quiet(session, turns=2, deliveries={follow_up.delivery or ""}, timeout=30)
    assert _replies(events)[-1] == "still here"
    report = check(on_b, [session], b.ledger)
    assert report.violations() == {}, report


def test_a_paused_owner_is_superseded_and_its_late_writes_refused(pair: tuple[EveProcess, EveProcess]) -> None:
    a, b = pair
    on_a, on_b = Client(a), Client(b)
    created = on_a.create("op-paused", '/call record {"label": "slow", "seconds": 1.5}')
    assert created.outcome == "ok" and created.session is not None and a.process is not None
    session = created.session
    deadline = time.monotonic() + 20
    while not read_ledger(a.ledger):
        assert time.monotonic() < deadline, "the tool never started"
        time.sleep(0.02)
    os.kill(a.process.pid, signal.SIGSTOP)  # A stalls mid-tool, holding the lease
    try:
        events = on_b.wait_quiet(session, turns=1, timeout=30)  # B takes over once the lease expires
    finally:
        os.kill(a.process.pid, signal.SIGCONT)
    finished = len(events)
    time.sleep(2.5)  # A's tool returns now; its result must not reach the log
    events = on_b.events(session)
    assert len(events) == finished, [e["type"] for e in events[finished:]]
    assert [e["type"] for e in events].count("turn.completed") == 1
    follow_up = on_a.send(session, "/reply after the pause", "k-after")  # A serves on, as a non-owner
    events = on_b.wait_quiet(session, turns=2, deliveries={follow_up.delivery or ""}, timeout=30)
    assert _replies(events)[-1] == "after the pause"
    report = check(on_b, [session], b.ledger)
    assert report.violations() == {}, report


def test_cancel_and_reset_sent_to_the_other_process_reach_the_owner(pair: tuple[EveProcess, EveProcess]) -> None:
    a, b = pair
    on_a, on_b = Client(a), Client(b)
    created = on_a.create("op-long", "/delay 300\n/say " + " ".join(f"w{i}" for i in range(40)))
    assert created.outcome == "ok" and created.session is not None
    session = created.session
    deadline = time.monotonic() + 20
    while not any(e["type"] == "message.appended" for e in on_b.events(session)):
        assert time.monotonic() < deadline, "the turn never streamed"
        time.sleep(0.05)
    with httpx.Client(base_url=b.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
        assert http.post(f"/eve/v1/session/{session}/cancel", json={}).status_code == 202
        events = on_b.wait_quiet(session, turns=1, timeout=20)
        assert [e["type"] for e in events if e["type"].startswith("turn.")][-1] == "turn.cancelled"
        reset = http.post(f"/eve/v1/session/{session}/reset", json={})
        assert reset.status_code == 200 and reset.json()["ok"], reset.text
        assert http.post(f"/eve/v1/session/{session}", json={"message": "hi"}).status_code == 409


def test_a_killed_creators_session_times_out_in_the_other_process(tmp_path: Path) -> None:
    with pg.fresh_schema() as schema:
        app = scaffold(tmp_path)
        (app / "agent" / "agent.py").write_text(
            "from eve_runtime import define_agent\n\n"
            "agent = define_agent(model='test', limits={'session_timeout_ms': 4_000})\n"
        )
        ledger = tmp_path / "ledger.ndjson"
        args = ["--world", "postgres", "--database-url", pg.schema_url(schema)]
        a = EveProcess(app, ledger, args=args, env={"EVE_LEASE_SECONDS": "1"})
        b = EveProcess(app, ledger, args=args, env={"EVE_LEASE_SECONDS": "1"})
        try:
            a.start()
            b.start()  # started before the session exists: only A schedules its timeout
            on_a, on_b = Client(a), Client(b)
            created = on_a.create("op-timeout", "/reply hello")
            assert created.outcome == "ok" and created.session is not None
            session = created.session
            assert _replies(on_a.wait_quiet(session, turns=1, timeout=30)) == ["hello"]
            time.sleep(1.0)  # A releases the lease (a lease it died holding would make the session an orphan for B)
            a.kill()
            deadline = time.monotonic() + 30  # the timeout, then B's next sweep (every 5 s)
            while not any(e["type"] == "session.completed" for e in on_b.events(session)):
                assert time.monotonic() < deadline, [e["type"] for e in on_b.events(session)]
                time.sleep(0.2)
            events = on_b.events(session)
            assert [e["type"] for e in events].count("session.completed") == 1
            assert [e["type"] for e in events][-2:] == ["session.waiting", "session.completed"]
        finally:
            a.kill()
            b.kill()


def test_a_process_restarted_after_a_kill_takes_its_sessions_back_without_waiting_out_the_lease(
    tmp_path: Path,
) -> None:
    with pg.fresh_schema() as schema:
        app = scaffold(tmp_path)
        ledger = tmp_path / "ledger.ndjson"
        args = ["--world", "postgres", "--database-url", pg.schema_url(schema)]
        eve = EveProcess(app, ledger, args=args, env={"EVE_LEASE_SECONDS": "300"})  # far longer than any wait here
        try:
            eve.start()
            client = Client(eve)
            created = client.create("op-restart", '/say working on it\n/call record {"label": "slow", "seconds": 2}')
            assert created.outcome == "ok" and created.session is not None
            deadline = time.monotonic() + 20
            while not read_ledger(eve.ledger):  # the tool is running
                assert time.monotonic() < deadline, "the tool never started"
                time.sleep(0.05)
            eve.kill()  # SIGKILL: its lease stays in the owners table, unexpired
            eve.start()
            events = Client(eve).wait_quiet(created.session, turns=1, timeout=30)
            terminals = [e["type"] for e in events if e["type"] in ("turn.completed", "turn.failed", "turn.cancelled")]
            assert terminals == ["turn.completed"], [e["type"] for e in events]
            report = check(Client(eve), [created.session], eve.ledger)
            assert report.violations() == {}, report
        finally:
            eve.kill()
