"""Crash soak: many kill -9s of a real `eve start` process under a steady workload.

Runs the crash harness of tests/crash for longer: S sessions, K kills at random moments (the
client retries indeterminate sends with their idempotency key), then checks every invariant
(no accepted message lost or duplicated, no started tool call run twice, identical event ids on
reread, one terminal event per turn, at most four attempts per step, exactly one `action.result`
for every requested call). Prints the counters and
the recovery time (restart to listening, and to the first new event).

Run: `.venv/bin/python bench/crash_soak.py [kills] [sessions]`
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests.crash.harness import Client, EveProcess, check, scaffold


def run(kills: int = 60, sessions: int = 5, seed: int = 7) -> dict[str, object]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        app = scaffold(root)
        ledger = root / "ledger.ndjson"
        server = EveProcess(app, ledger)
        client = Client(server, timeout=5.0)
        restarts: list[float] = []
        try:
            server.start()
            ids = []
            for n in range(sessions):
                op = client.create(f"op-{n}")
                assert op.session is not None
                ids.append(op.session)
            pending: list[tuple[str, str, str]] = []
            for round_ in range(kills):
                for n, session in enumerate(ids):
                    key = f"k-{round_}-{n}"
                    message = (
                        f"/delay {rng.choice([0, 1, 5, 20])}\n"
                        f'/call record {{"label": "{key}", "seconds": {rng.choice([0, 0, 0.02, 0.1])}}}'
                    )
                    if client.send(session, message, key, policy=rng.choice(["queue", "steer"])).outcome == "info":
                        pending.append((session, message, key))
                time.sleep(rng.uniform(0.0, 0.3))
                server.kill()
                started = time.perf_counter()
                server.start()
                restarts.append(time.perf_counter() - started)
                for item in list(pending):
                    if client.send(item[0], item[1], item[2], policy="queue").outcome == "ok":
                        pending.remove(item)
            for session in ids:
                acked = {op.delivery for op in client.history if op.session == session and op.delivery}
                client.wait_quiet(session, deliveries={d for d in acked if d}, timeout=120)
            report = check(client, ids, ledger)
        finally:
            server.kill()
    return {
        "kills": kills,
        "report": report,
        "restart_median_s": statistics.median(restarts),
        "restart_max_s": max(restarts),
    }


def main() -> None:
    kills = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    sessions = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    figures = run(kills, sessions)
    report = figures["report"]
    print(f"crash soak: {kills} kills, {sessions} sessions")
    print(f"  {report}")
    print(f"  violations: {report.violations() or 'none'}")  # type: ignore[attr-defined]
    print(f"  restart to listening: median {figures['restart_median_s']:.2f} s, max {figures['restart_max_s']:.2f} s")


if __name__ == "__main__":
    main()
