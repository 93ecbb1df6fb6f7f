"""Framework time per step on the local world, against one raw SQLite full-sync commit.

Measured: sequential turns on the template app with the offline `test` model (which costs next to
nothing, so the time is the framework's: accepting the message durably, waking the session,
loading it, emitting and committing its events, history and checkpoint), over a `SqliteStore` in
`.eve/bench/` on the real disk. A turn is timed from `Runtime.deliver` until its `session.waiting`
commit is durable. Two lines: one-step echo turns on one session, and two-step tool-calling turns
(`/call get_weather`, then the answer) on another, reported per step (turn time / steps). Nobody
reads those sessions' streams, so a step's streamed deltas wait for its commit; a third line runs
the echo turns of a session whose stream a reader tails (`wait_for_events` in a loop, as the
stream route does), for which the first delta is written at once, in a transaction of its own.

Baseline, measured in the same run and interleaved with the turns (machines here are shared and
noisy): one small insert + COMMIT on a plain sqlite3 connection with the store's pragmas (WAL,
`synchronous=FULL`) in the same directory.

Target (DESIGN.md): within 3x of one raw commit per step (median); the other half of the target, faster
than a DBOS step on the same store, is measured beside DBOS by `make bench-peers`. Also printed:
the store transactions (writer group commits) and jobs one turn costs.

Run: `.venv/bin/python bench/step_overhead.py [rounds] [warmup]`
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import TOOL_TURN, LocalWorld, RawCommit, local_world, median, percentile, verdict
from eve_runtime.serving import event_loop

TARGET_RATIO = 3.0


async def _timed_turn(world: LocalWorld, session_id: str, message: str) -> tuple[float, float, int, int]:
    """Seconds of one turn, seconds until `deliver` returned (the message durably accepted), and the
    writer transactions and jobs the turn cost."""
    stats = world.store.stats
    transactions, jobs = stats.transactions, stats.jobs
    started = time.perf_counter()
    await world.start_turn(session_id, message)
    accepted = time.perf_counter() - started
    await world.wait_turn(session_id)
    elapsed = time.perf_counter() - started
    return elapsed, accepted, stats.transactions - transactions, stats.jobs - jobs


async def _tail(world: LocalWorld, session_id: str) -> None:
    """Read the session's events as they come, as a stream client would."""
    known = 0
    while True:
        known = await world.store.wait_for_events(session_id, known, 60.0)


async def measure(rounds: int, warmup: int) -> dict[str, Any]:
    """Run `warmup` untimed rounds, then `rounds` timed rounds of (raw commit, echo turn, tool turn)."""
    async with local_world("step-overhead") as world:
        raw = RawCommit(world.directory)
        try:
            echo = await world.create()
            tool = await world.create()
            watched = await world.create()
            reader = asyncio.create_task(_tail(world, watched))
            raw_s: list[float] = []
            echo_s: list[float] = []
            accept_s: list[float] = []
            tool_s: list[float] = []
            watched_s: list[float] = []
            watched_tx: list[int] = []
            echo_tx: list[int] = []
            echo_jobs: list[int] = []
            tool_tx: list[int] = []
            tool_jobs: list[int] = []
            for index in range(warmup + rounds):
                commit = raw.sample()
                echo_time, accept_time, e_tx, e_jobs = await _timed_turn(world, echo, f"hello {index}")
                tool_time, _accept, t_tx, t_jobs = await _timed_turn(world, tool, TOOL_TURN)
                watched_time, _accept, w_tx, _jobs = await _timed_turn(world, watched, f"hello {index}")
                if index < warmup:
                    continue
                raw_s.append(commit)
                echo_s.append(echo_time)
                accept_s.append(accept_time)
                tool_s.append(tool_time / 2)
                watched_s.append(watched_time)
                watched_tx.append(w_tx)
                echo_tx.append(e_tx)
                echo_jobs.append(e_jobs)
                tool_tx.append(t_tx)
                tool_jobs.append(t_jobs)
            completed = {session: world.store.boundaries.get(session, 0) for session in (echo, tool, watched)}
            failures = world.store.failures
        finally:
            raw.close()
            reader.cancel()
    quarter = max(1, rounds // 4)
    return {
        "rounds": rounds,
        "turns_completed": completed,
        "expected_turns": warmup + rounds,
        "failed_turns": failures,
        "raw_commit_ms": _ms(raw_s),
        "echo_step_ms": _ms(echo_s),
        "accept_ms": _ms(accept_s),
        "tool_step_ms": _ms(tool_s),
        "watched_step_ms": _ms(watched_s),
        "watched_transactions_per_turn": median(watched_tx),
        "echo_first_quarter_ms": median(echo_s[:quarter]) * 1000,
        "echo_last_quarter_ms": median(echo_s[-quarter:]) * 1000,
        "tool_first_quarter_ms": median(tool_s[:quarter]) * 1000,
        "tool_last_quarter_ms": median(tool_s[-quarter:]) * 1000,
        "echo_transactions_per_turn": median(echo_tx),
        "echo_jobs_per_turn": median(echo_jobs),
        "tool_transactions_per_turn": median(tool_tx),
        "tool_jobs_per_turn": median(tool_jobs),
    }


def _ms(samples: list[float]) -> dict[str, float]:
    return {"median": median(samples) * 1000, "p90": percentile(samples, 90) * 1000}


def run(rounds: int = 200, warmup: int = 20) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(rounds, warmup))


def report(figures: dict[str, Any]) -> None:
    raw = figures["raw_commit_ms"]["median"]
    print(
        f"step overhead, {figures['rounds']} interleaved rounds "
        f"(target: median within {TARGET_RATIO:.0f}x of one raw commit; beside DBOS: make bench-peers)"
    )
    if figures["failed_turns"]:
        print(f"  WARNING: {figures['failed_turns']} turns failed: the figures below are not those of working turns")
    print(f"  {'':<30} {'median':>9} {'p90':>9}  {'vs commit':>9}")
    print(f"  {'raw SQLite full-sync commit':<30} {raw:8.3f}ms {figures['raw_commit_ms']['p90']:8.3f}ms  {1:8.1f}x")
    for label, key in (
        ("echo turn, per step (1 step)", "echo_step_ms"),
        ("tool turn, per step (2 steps)", "tool_step_ms"),
        ("echo turn, stream read (1 step)", "watched_step_ms"),
    ):
        step = figures[key]
        ratio = step["median"] / raw
        ok = ratio <= TARGET_RATIO
        print(f"  {label:<30} {step['median']:8.3f}ms {step['p90']:8.3f}ms  {ratio:8.1f}x  {verdict(ok)}")
    print(
        f"  drift (median, first vs last quarter of the rounds): echo {figures['echo_first_quarter_ms']:.3f} -> "
        f"{figures['echo_last_quarter_ms']:.3f} ms, tool {figures['tool_first_quarter_ms']:.3f} -> "
        f"{figures['tool_last_quarter_ms']:.3f} ms per step"
    )
    print(f"  of an echo turn, accepting the message (deliver returns): {figures['accept_ms']['median']:.3f} ms median")
    print(
        f"  store cost per turn: echo {figures['echo_transactions_per_turn']:.0f} transactions "
        f"({figures['echo_jobs_per_turn']:.0f} jobs), tool {figures['tool_transactions_per_turn']:.0f} transactions "
        f"({figures['tool_jobs_per_turn']:.0f} jobs), echo with its stream read "
        f"{figures['watched_transactions_per_turn']:.0f} transactions"
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    report(run(rounds, warmup))


if __name__ == "__main__":
    main()
