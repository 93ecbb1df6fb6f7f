"""Crash soak: hundreds of kill -9s of a real `eve start` process under a steady workload, on each world.

Runs the crash harness of tests/crash for longer: S sessions, K kills at random moments (the
client retries indeterminate sends with their idempotency key), then checks every invariant
(no accepted message lost or duplicated, no started tool call run twice, identical event ids on
reread, one terminal event per turn, at most four attempts per step, exactly one `action.result`
for every requested call). On the Postgres world the
server's database connections are also cut (`pg_terminate_backend`) at random moments between
kills: a request may then answer 503 `store_unavailable` (retried like an indeterminate send),
never 500. Prints the counters, the violations (there must be none) and the recovery time.

Run: `.venv/bin/python bench/crash_soak.py [--kills K] [--sessions S] [--world local|postgres|both]`
(`make bench` runs the default: 40 kills per world; the README's figures come from `--kills 300`).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests import pg
from tests.crash.harness import TERMINALS, Client, EveProcess, Report, check, scaffold

DEFAULT_KILLS = 40


@dataclass
class Figures:
    world: str
    kills: int
    sessions: int
    report: Report
    restarts: list[float]
    terminated: int = 0
    """Postgres backends terminated (pg_terminate_backend), across `cuts` moments."""
    cuts: int = 0
    refused: int = 0
    """Sends answered 503 (`store_unavailable`, then sent again): never a 500."""
    statuses: set[int] = field(default_factory=set)
    seconds: float = 0.0
    unsettled: int = 0
    """Sessions still working (or holding unhandled messages) 3 minutes after the last kill."""


def _cut_later(name: str, delay: float, into: list[int]) -> threading.Thread:
    """Terminate every backend of `name` after `delay` seconds (on a thread, while the client works)."""

    def cut() -> None:
        time.sleep(delay)
        into.append(pg.terminate_backends(name))

    thread = threading.Thread(target=cut, daemon=True)
    thread.start()
    return thread


def _diagnose(client: Client, session: str, schema: str | None) -> None:
    """Print what an unsettled session looks like: its open turns, and on Postgres its lease and inbox."""
    events = client.events(session)
    ended = {e["data"].get("turnId") for e in events if e["type"] in TERMINALS}
    for e in events:
        if e["type"] == "turn.started" and e["data"]["turnId"] not in ended:
            tail = [f"{x['index']}:{x['type']}" for x in events if x["index"] >= e["index"]][:30]
            print(f"    open turn {e['data']['turnId']} at index {e['index']} of {len(events)}: {tail}")
    if schema is None:
        return
    import psycopg

    with psycopg.connect(pg.schema_url(schema), autocommit=True) as conn:
        now = conn.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()
        for table, query in [
            ("owners", "SELECT owner, expires_at, fence FROM owners WHERE session_id = %s"),
            ("session", "SELECT status, deadline FROM sessions WHERE id = %s"),
            ("pending", "SELECT id, kind, seq FROM deliveries WHERE session_id = %s AND NOT consumed ORDER BY seq"),
        ]:
            print(f"    {table} (db clock {now[0] if now else '?'}): {conn.execute(query, (session,)).fetchall()}")


def run(world: str, kills: int, sessions: int, seed: int = 7, log: Path | None = None) -> Figures:
    rng = random.Random(seed)
    started_at = time.perf_counter()
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        app = scaffold(root)
        ledger = root / "ledger.ndjson"
        args: list[str] = []
        name = f"eve-soak-{uuid.uuid4().hex[:8]}"
        schema: str | None = None
        if world == "postgres":
            schema = stack.enter_context(pg.fresh_schema())
            args = ["--world", "postgres", "--database-url", f"{pg.schema_url(schema)}&application_name={name}"]
        server = EveProcess(app, ledger, args=args, env={"EVE_LEASE_SECONDS": "2"}, log=log and log / f"{world}.log")
        client = Client(server, timeout=5.0)
        restarts: list[float] = []
        terminated: list[int] = []
        cuts = 0
        try:
            server.start()
            ids = []
            for n in range(sessions):
                op = client.create(f"op-{n}")
                assert op.session is not None, op
                ids.append(op.session)
            pending: list[tuple[str, str, str]] = []
            for round_ in range(kills):
                cutter = None
                if world == "postgres" and rng.random() < 0.5:
                    cutter = _cut_later(name, rng.uniform(0.0, 0.3), terminated)
                    cuts += 1
                for n, session in enumerate(ids):
                    key = f"k-{round_}-{n}"
                    message = (
                        f"/delay {rng.choice([0, 1, 5, 20])}\n"
                        f'/call record {{"label": "{key}", "seconds": {rng.choice([0, 0, 0.02, 0.1])}}}'
                    )
                    op = client.send(session, message, key, policy=rng.choice(["queue", "steer"]))
                    if op.outcome == "info" or op.status == 503:  # indeterminate, or refused for now
                        pending.append((session, message, key))
                time.sleep(rng.uniform(0.0, 0.3))
                if cutter is not None:
                    cutter.join()
                server.kill()
                began = time.perf_counter()
                server.start()
                restarts.append(time.perf_counter() - began)
                for item in list(pending):
                    if client.send(item[0], item[1], item[2], policy="queue").outcome == "ok":
                        pending.remove(item)
            for _ in range(50):  # what the last restart refused (503) or left indeterminate
                for item in list(pending):
                    if client.send(item[0], item[1], item[2], policy="queue").outcome == "ok":
                        pending.remove(item)
                if not pending:
                    break
                time.sleep(0.2)
            unsettled = 0
            for session in ids:
                acked = {op.delivery for op in client.history if op.session == session and op.delivery}
                try:
                    client.wait_quiet(session, deliveries={d for d in acked if d}, timeout=180)
                except AssertionError as exc:  # counted (a violation), and the invariants still checked
                    print(f"  {world}: {exc}")
                    _diagnose(client, session, schema)
                    unsettled += 1
            report = check(client, ids, ledger)
        finally:
            server.kill()
    statuses = {op.status for op in client.history if op.status is not None}
    refused = sum(1 for op in client.history if op.status == 503)
    return Figures(
        world,
        kills,
        sessions,
        report,
        restarts,
        terminated=sum(terminated),
        cuts=cuts,
        refused=refused,
        statuses=statuses,
        seconds=time.perf_counter() - started_at,
        unsettled=unsettled,
    )


def show(figures: Figures) -> int:
    """Print one world's figures; the number of violations (a 500 counts as one)."""
    report = figures.report
    violations = dict(report.violations())
    server_errors = sorted(s for s in figures.statuses if s >= 500 and s != 503)
    if server_errors:
        violations["server_errors"] = len(server_errors)
    if figures.unsettled:
        violations["unsettled_sessions"] = figures.unsettled
    print(f"== {figures.world}: {figures.kills} kills (kill -9), {figures.sessions} sessions, {figures.seconds:.0f} s")
    if figures.world == "postgres":
        print(f"  {figures.terminated} backends terminated at {figures.cuts} moments (pg_terminate_backend)")
    print(
        f"  {report.turns} turns, {report.events} events, {report.ledger_lines} tool runs, "
        f"{report.rerun_steps} steps re-run after a kill, {report.indeterminate} indeterminate sends, "
        f"{figures.refused} sends answered 503 and sent again; statuses {sorted(figures.statuses)}"
    )
    print(f"  {report}")
    print(f"  violations: {sum(violations.values())} {violations or ''}".rstrip())
    for detail in report.details:
        print(f"    {detail}")
    median, worst = statistics.median(figures.restarts), max(figures.restarts)
    print(f"  restart to listening: median {median:.2f} s, max {worst:.2f} s")
    return sum(violations.values())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--kills", type=int, default=DEFAULT_KILLS, help="kill -9s per world")
    parser.add_argument("--sessions", type=int, default=5, help="sessions receiving messages")
    parser.add_argument("--world", choices=["local", "postgres", "both"], default="both")
    parser.add_argument("--seed", type=int, default=7, help="seed of the workload's and the kills' randomness")
    parser.add_argument("--log", type=Path, help="directory for the servers' logs (WORLD.log), kept afterwards")
    options = parser.parse_args(argv)
    worlds = ["local", "postgres"] if options.world == "both" else [options.world]
    if "postgres" in worlds and pg.unavailable() is not None:
        print(f"postgres: skipped ({pg.unavailable()})")
        worlds.remove("postgres")
    total, kills = 0, []
    for world in worlds:
        figures = run(world, options.kills, options.sessions, seed=options.seed, log=options.log)
        total += show(figures)
        kills.append(f"{figures.kills} on {world}")
    print(f"crash soak: {total} violations over {' and '.join(kills)} kills")
    if total:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
