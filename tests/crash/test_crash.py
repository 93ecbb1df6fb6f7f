"""kill -9 an `eve start` process at chosen and random moments; restart; check the invariants.

CI-sized: a named crash point per interesting moment of a turn, then a few dozen random kills.
`bench/crash_soak.py` runs the long version.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.crash.harness import Client, EveProcess, check, read_ledger, scaffold

pytestmark = pytest.mark.scenario

CRASH_CASES = [
    ("after-enqueue", '/call record {"label": "a"}'),
    ("after-turn-start", '/say hello\n/call record {"label": "a"}'),
    ("after-turn-opened", '/say hello\n/call record {"label": "a"}'),
    ("during-model-call", '/delay 5\n/say thinking it over\n/call record {"label": "a"}'),
    ("after-actions-requested", '/call record {"label": "a"}'),
    ("after-tool-effect", '/call record {"label": "a"}\n/call record {"label": "b", "seconds": 0.2}'),
    ("before-checkpoint", '/call record {"label": "a"}'),
    ("before-turn-end", '/call record {"label": "a"}'),
]


@pytest.mark.parametrize(("crashpoint", "message"), CRASH_CASES, ids=[c for c, _ in CRASH_CASES])
def test_kill_at_a_crash_point_then_recover(tmp_path: Path, crashpoint: str, message: str) -> None:
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start(crashpoint=crashpoint)
        created = client.create("op-1", message)
        assert server.wait_dead(), f"the process did not die at {crashpoint}"
        server.kill()
        server.start()
        if created.outcome != "ok":  # the create's answer was lost with the process: retry it, create-once
            created = client.create("op-1", message)
        assert created.outcome == "ok" and created.session is not None
        session = created.session
        client.wait_quiet(session, turns=1)
        follow_up = client.send(session, "/reply all good", "k-after")
        assert follow_up.outcome == "ok"
        events = client.wait_quiet(session, turns=2, deliveries={follow_up.delivery or ""})
        report = check(client, [session], ledger)
        assert report.violations() == {}, report
        labels = [line["label"] for line in read_ledger(ledger)]
        assert labels.count("a") <= 1 and labels.count("b") <= 1
        assert events[-1]["type"] == "session.waiting"
        final = [e for e in events if e["type"] == "message.completed"][-1]["data"]["message"]
        assert final == "all good"
    finally:
        server.kill()


def test_random_kills_keep_every_invariant(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server, timeout=5.0)
    kills = 12
    try:
        server.start()
        sessions = []
        for n in range(3):
            op = client.create(f"op-{n}")
            assert op.session is not None
            sessions.append(op.session)
        pending: list[tuple[str, str, str]] = []  # indeterminate sends to retry: (session, message, key)
        for round_ in range(kills):
            for n, session in enumerate(sessions):
                key = f"k-{round_}-{n}"
                seconds = rng.choice([0, 0, 0.05, 0.15])
                message = f'/delay {rng.choice([0, 2, 10])}\n/call record {{"label": "{key}", "seconds": {seconds}}}'
                op = client.send(session, message, key, policy="queue")
                if op.outcome == "info":
                    pending.append((session, message, key))
            time.sleep(rng.uniform(0.0, 0.25))
            server.kill()
            server.start()
            for session, message, key in list(pending):
                if client.send(session, message, key, policy="queue").outcome == "ok":
                    pending.remove((session, message, key))
        for session in sessions:
            acked = {op.delivery for op in client.history if op.session == session and op.delivery}
            client.wait_quiet(session, turns=len(acked), deliveries={d for d in acked if d}, timeout=60)
        report = check(client, sessions, ledger)
        print(f"\nrandom kills: {kills}, {report}")
        assert report.violations() == {}, report
        assert report.turns >= kills  # the workload really ran between the kills
    finally:
        server.kill()


def test_a_send_lost_after_it_was_stored_is_retried_without_a_duplicate(tmp_path: Path) -> None:
    message = '/delay 300\n/say one moment\n/call record {"label": "once"}'
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start()
        created = client.create("op-1", "hello")
        assert created.session is not None
        session = created.session
        client.wait_quiet(session, turns=1)
        server.kill()
        server.start(crashpoint="after-enqueue")
        # The turn's first words come after 300 ms: the process dies (at once) before the call's start
        # can be durable, so the call runs after the restart. Without the delay, a fast turn may have made
        # it durable in the message's transaction, and the restart then reports it interrupted, never run.
        lost = client.send(session, message, "k-1")
        assert lost.outcome == "info" and server.wait_dead()
        server.kill()
        server.start()
        retried = client.send(session, message, "k-1")
        assert retried.outcome == "ok" and retried.delivery is not None
        events = client.wait_quiet(session, turns=2, deliveries={retried.delivery})
        received = [e for e in events if e["type"] == "message.received"]
        assert [e["data"]["message"] for e in received] == ["hello", message]
        said = [e["data"]["message"] for e in events if e["type"] == "message.completed"]
        assert [line["label"] for line in read_ledger(ledger)] == ["once"], said  # "interrupted": it ran too soon
        report = check(client, [session], ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()


def _parked_request(client: Client, session: str) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        events = client.events(session)
        if events and events[-1]["type"] == "turn.waiting":
            return str([e for e in events if e["type"] == "input.requested"][-1]["data"]["requests"][0]["requestId"])
        time.sleep(0.05)
    raise AssertionError("the turn never parked on its approval")


def test_a_parked_approval_survives_kill_9_and_runs_once(tmp_path: Path) -> None:
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start()
        created = client.create("op-1", '/call guarded {"label": "approved-once"}')
        assert created.session is not None
        session = created.session
        request_id = _parked_request(client, session)
        server.kill()  # parked: nothing runs, nothing is lost
        server.start()
        assert read_ledger(ledger) == []
        answered = client.respond(session, request_id, "approve", "k-approve")
        assert answered.outcome == "ok"
        events = client.wait_quiet(session, turns=1)
        assert [line["label"] for line in read_ledger(ledger)] == ["approved-once"]
        assert sum(e["type"] == "turn.started" for e in events) == 1
        assert check(client, [session], ledger).violations() == {}
    finally:
        server.kill()


def test_a_kill_after_the_approval_request_but_before_the_park_still_waits_for_the_answer(tmp_path: Path) -> None:
    """`input.requested` is durable, the park's checkpoint is not: the restart parks the turn on that request."""
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start(crashpoint="after-input-requested")
        created = client.create("op-1", '/call guarded {"label": "asked-once"}')
        assert server.wait_dead(), "the process did not die at after-input-requested"
        server.kill()
        server.start()
        if created.outcome != "ok":
            created = client.create("op-1", '/call guarded {"label": "asked-once"}')
        assert created.session is not None
        session = created.session
        request_id = _parked_request(client, session)  # the request the killed process raised
        events = client.events(session)
        requested = [e for e in events if e["type"] == "input.requested"]
        assert len(requested) == 1 and requested[0]["data"]["requests"][0]["requestId"] == request_id
        assert [e for e in events if e["type"] == "action.result"] == []  # the call is not closed as abandoned
        assert read_ledger(ledger) == []
        answered = client.respond(session, request_id, "approve", "k-approve")
        assert answered.outcome == "ok"
        events = client.wait_quiet(session, turns=1)
        assert [line["label"] for line in read_ledger(ledger)] == ["asked-once"]
        assert sum(e["type"] == "turn.started" for e in events) == 1
        results = [e["data"] for e in events if e["type"] == "action.result"]
        assert [r["status"] for r in results] == ["completed"]
        assert check(client, [session], ledger).violations() == {}
    finally:
        server.kill()


def test_a_kill_while_an_approved_call_runs_never_runs_it_again(tmp_path: Path) -> None:
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start()
        created = client.create("op-1", '/call guarded {"label": "slow", "seconds": 5}')
        assert created.session is not None
        session = created.session
        request_id = _parked_request(client, session)
        client.respond(session, request_id, "approve", "k-approve")
        deadline = time.monotonic() + 20
        while not read_ledger(ledger) and time.monotonic() < deadline:  # the tool started (its effect is done)
            time.sleep(0.02)
        server.kill()
        server.start()
        events = client.wait_quiet(session, turns=1)
        assert [line["label"] for line in read_ledger(ledger)] == ["slow"]
        final = [e for e in events if e["type"] == "message.completed"][-1]["data"]["message"]
        assert "interrupted before its result was recorded" in final
        assert check(client, [session], ledger).violations() == {}
    finally:
        server.kill()
