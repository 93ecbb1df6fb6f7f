"""The Postgres world: framework time per step against one raw Postgres commit, and scaling with processes.

1. Step overhead: sequential echo turns (one step) and tool turns (two steps) on the template app
   with the offline `test` model, over a `PostgresStore` in a scratch schema, with leases on (as
   `eve start --world postgres` runs). A turn is timed from `Runtime.deliver` until its
   `session.waiting` commit is durable. Baseline, interleaved with the turns: one small INSERT in
   its own transaction (autocommit) on a plain psycopg connection to the same server.
   Target (DESIGN.md): within 3x of one raw commit per step.
2. Throughput: turns per second with 1 and then 2 worker processes on one schema, each worker a
   runtime over its own `PostgresStore` driving its share of the sessions (every session runs
   sequential echo turns, waiting for each turn's end in the event log: whichever worker holds a
   session's lease runs its turn). Prints the ratio (target: it grows with worker processes).

Skips (exit 0, with a message) when PostgreSQL is unreachable. `EVE_BENCH_DATABASE_URL` picks the
server (default `postgresql://postgres@127.0.0.1:5432/test`).

Run: `.venv/bin/python bench/postgres.py [rounds] [sessions] [turns]`
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import BOUNDARIES, TOOL_TURN, compile_template, median, percentile, scratch_dir, verdict
from eve_runtime.serving import event_loop
from eve_runtime.sessions.runtime import Runtime, RuntimeOptions
from eve_runtime.store.base import Commit

TARGET_RATIO = 3.0
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def database_url() -> str:
    return os.environ.get("EVE_BENCH_DATABASE_URL") or DEFAULT_URL


def unreachable() -> str | None:
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    try:
        with psycopg.connect(database_url(), connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL is unreachable ({str(exc).strip().splitlines()[0]})"
    return None


@contextmanager
def scratch_schema() -> Iterator[str]:
    import psycopg

    name = f"eve_bench_{uuid.uuid4().hex[:10]}"
    try:
        yield name
    finally:
        with psycopg.connect(database_url(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _watched_store(schema: str) -> Any:
    """A `PostgresStore` that lets the benchmark await durable turn boundaries (no polling)."""
    from eve_runtime.store.postgres import PostgresStore

    class Watched(PostgresStore):
        def __init__(self) -> None:
            super().__init__(database_url(), schema=schema)
            self.boundaries: dict[str, int] = {}
            self.failures = 0
            self.changed = asyncio.Event()

        async def commit(self, session_id: str, commit: Commit) -> None:
            await super().commit(session_id, commit)
            self.failures += sum(1 for row in commit.events if row.type in ("turn.failed", "session.failed"))
            added = sum(1 for row in commit.events if row.type in BOUNDARIES)
            if added:
                self.boundaries[session_id] = self.boundaries.get(session_id, 0) + added
                self.changed.set()

        async def wait_boundaries(self, session_id: str, count: int, timeout: float = 30.0) -> None:
            deadline = time.monotonic() + timeout
            while self.boundaries.get(session_id, 0) < count:
                self.changed.clear()
                await asyncio.wait_for(self.changed.wait(), max(0.001, deadline - time.monotonic()))

    return Watched()


@asynccontextmanager
async def postgres_world(schema: str, root: Path) -> AsyncIterator[tuple[Any, Runtime]]:
    """A started runtime (leases on) of the template app over a watched store in `schema`."""
    app = compile_template(root)
    try:
        store = _watched_store(schema)
        await store.open()
        try:
            assert app.root is not None
            runtime = Runtime(app.root, store, options=RuntimeOptions(lease_seconds=15.0))
            await runtime.start()
            try:
                yield store, runtime
            finally:
                await runtime.stop(deadline=5.0)
        finally:
            await store.close()
    finally:
        app.loader.release()


async def _turn(store: Any, runtime: Runtime, session_id: str, message: str, count: int) -> float:
    started = time.perf_counter()
    await runtime.deliver(session_id, "message", {"message": message})
    await store.wait_boundaries(session_id, count)
    return time.perf_counter() - started


async def measure_steps(rounds: int, warmup: int) -> dict[str, Any]:
    import psycopg

    with scratch_dir("postgres-steps") as root, scratch_schema() as schema:
        async with postgres_world(schema, root) as (store, runtime):
            raw = await psycopg.AsyncConnection.connect(database_url(), autocommit=True)
            try:
                await raw.execute(f'CREATE TABLE "{schema}".raw_rows (id BIGSERIAL PRIMARY KEY, value TEXT NOT NULL)')
                insert = f'INSERT INTO "{schema}".raw_rows (value) VALUES (%s)'
                echo = (await runtime.create_session()).id
                tool = (await runtime.create_session()).id
                raw_s: list[float] = []
                echo_s: list[float] = []
                tool_s: list[float] = []
                for index in range(warmup + rounds):
                    started = time.perf_counter()
                    await raw.execute(insert, ("x" * 200,))
                    commit = time.perf_counter() - started
                    echo_time = await _turn(store, runtime, echo, f"hello {index}", index + 1)
                    tool_time = await _turn(store, runtime, tool, TOOL_TURN, index + 1)
                    if index >= warmup:
                        raw_s.append(commit)
                        echo_s.append(echo_time)
                        tool_s.append(tool_time / 2)
            finally:
                await raw.close()
            failures = store.failures
    return {
        "rounds": rounds,
        "failed_turns": failures,
        "raw_commit_ms": _ms(raw_s),
        "echo_step_ms": _ms(echo_s),
        "tool_step_ms": _ms(tool_s),
    }


def _ms(samples: list[float]) -> dict[str, float]:
    return {"median": median(samples) * 1000, "p90": percentile(samples, 90) * 1000}


# -- throughput with worker processes -------------------------------------------------------------


async def _worker(schema: str, sessions: int, turns: int) -> None:
    """One worker process: create its sessions once told (every worker has started), run the turns on `go`.

    A runtime starting up wakes every active session of the store (recovery) and keeps the lease of
    one it woke for a moment: had the workers created their sessions while the others were starting,
    one worker would run some of another's sessions, every turn a hop between the two processes.
    """
    with scratch_dir("postgres-worker") as root:
        async with postgres_world(schema, root) as (store, runtime):
            loop = asyncio.get_running_loop()
            print("started", flush=True)
            await loop.run_in_executor(None, sys.stdin.readline)
            ids = [(await runtime.create_session()).id for _ in range(sessions)]
            print("ready", flush=True)
            await loop.run_in_executor(None, sys.stdin.readline)
            started = time.perf_counter()

            async def drive(session_id: str) -> None:
                # Another worker may run the turn (it holds the session's lease): read the event log.
                known = await store.event_count(session_id)
                for n in range(turns):
                    await runtime.deliver(session_id, "message", {"message": f"turn {n}"})
                    while True:
                        count = await store.wait_for_events(session_id, known, 30.0)
                        if count == known:
                            raise TimeoutError(f"session {session_id}: no event for 30 s")
                        rows = await store.read_events(session_id, known, count)
                        known = count
                        if any(row.type in BOUNDARIES for row in rows):
                            break

            await asyncio.gather(*(drive(session_id) for session_id in ids))
            elapsed = time.perf_counter() - started
            print(json.dumps({"turns": sessions * turns, "seconds": elapsed, "failed": store.failures}), flush=True)


def throughput(workers: int, sessions: int, turns: int) -> dict[str, float]:
    """Turns per second of `workers` processes, each driving `sessions` sessions of `turns` turns."""
    with scratch_schema() as schema:
        command = [sys.executable, __file__, "--worker", schema, str(sessions), str(turns)]
        procs = [
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(workers)
        ]
        try:
            for step, answer in (("create", "started"), ("go", "ready")):
                for proc in procs:
                    assert proc.stdout is not None
                    if proc.stdout.readline().strip() != answer:
                        raise RuntimeError("a worker failed to start")
                started = time.perf_counter()
                for proc in procs:
                    assert proc.stdin is not None
                    proc.stdin.write(f"{step}\n")
                    proc.stdin.flush()
            results = []
            for proc in procs:
                assert proc.stdout is not None
                results.append(json.loads(proc.stdout.readline()))
            wall = time.perf_counter() - started
        finally:
            for proc in procs:
                proc.communicate(timeout=60)  # closes the pipes (a worker given no `go` runs and ends)
    total = sum(r["turns"] for r in results)
    return {"turns": total, "seconds": wall, "turns_per_s": total / wall, "failed": sum(r["failed"] for r in results)}


def report(steps: dict[str, Any], one: dict[str, float], two: dict[str, float]) -> None:
    raw = steps["raw_commit_ms"]["median"]
    print(f"Postgres world: step overhead, {steps['rounds']} interleaved rounds (target: within {TARGET_RATIO:.0f}x)")
    if steps["failed_turns"] or one["failed"] or two["failed"]:
        print("  WARNING: some turns failed: the figures below are not those of working turns")
    print(f"  {'':<30} {'median':>9} {'p90':>9}  {'vs commit':>9}")
    print(f"  {'raw Postgres commit':<30} {raw:8.3f}ms {steps['raw_commit_ms']['p90']:8.3f}ms  {1:8.1f}x")
    for label, key in (
        ("echo turn, per step (1 step)", "echo_step_ms"),
        ("tool turn, per step (2 steps)", "tool_step_ms"),
    ):
        step = steps[key]
        ratio = step["median"] / raw
        ok = verdict(ratio <= TARGET_RATIO)
        print(f"  {label:<30} {step['median']:8.3f}ms {step['p90']:8.3f}ms  {ratio:8.1f}x  {ok}")
    ratio = two["turns_per_s"] / one["turns_per_s"]
    print("Postgres world: throughput with worker processes (target: grows with workers)")
    print(f"  1 worker : {one['turns_per_s']:8.1f} turns/s ({one['turns']:.0f} turns in {one['seconds']:.2f}s)")
    print(f"  2 workers: {two['turns_per_s']:8.1f} turns/s ({two['turns']:.0f} turns in {two['seconds']:.2f}s)")
    print(f"  ratio 2/1: {ratio:.2f}x  {verdict(ratio > 1.0)}  ({os.cpu_count()} CPU cores here, shared with Postgres)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        event_loop.run(_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        return
    reason = unreachable()
    if reason is not None:
        print(f"skipped: {reason}")
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    sessions = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    turns = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    steps = event_loop.run(measure_steps(rounds, warmup=max(1, rounds // 10)))
    one = throughput(1, sessions * 2, turns)
    two = throughput(2, sessions, turns)
    report(steps, one, two)


if __name__ == "__main__":
    main()
