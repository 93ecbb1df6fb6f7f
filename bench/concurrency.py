"""10,000 concurrent sessions in one process on the local world: throughput, parked tasks, parked memory.

Measured: N sessions of the template app (offline `test` model, `SqliteStore` in `.eve/bench/`)
are created at once, each with one message, and every turn runs concurrently until its
`session.waiting` is durable. Reported: the total time and turns/s; that every session completed
its turn; the asyncio tasks alive once they are parked, against the runtime with no session
(target: no per-session task: the actor, turn and flush tasks are gone); and the memory each
parked session keeps.

Three rounds of N sessions run on one runtime (after a few warm-up sessions): the first is timed
and gives an RSS delta; the second gives another RSS delta; the third runs under `tracemalloc`
(which slows it down) and gives the Python heap still allocated once its sessions are parked,
against the heap just before it, divided by N. That heap figure is the target (under 5 KB per
parked session). The first RSS delta also holds the allocator's high-water mark of N sessions
running at once (and SQLite's page cache filling up), which the process keeps but reuses: the
second round's RSS delta shows how much of it parked sessions really keep.

Baseline, measured in the same run: N concurrent single-row commits through the same store writer
(`store.create_session` without a message, one row each), as commits/s, against the store jobs/s
the turns ran (each turn is several jobs: its message, its start, its events, its end).

Run: `.venv/bin/python bench/concurrency.py [sessions]`
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import LocalWorld, local_world, rss_bytes, verdict, wait_parked
from eve_runtime.serving import event_loop

TARGET_BYTES_PER_SESSION = 5 * 1024
WARMUP_SESSIONS = 10


async def _one_session(world: LocalWorld, index: int, timeout: float) -> str:
    session_id = await world.create(f"hello from session {index}")
    await world.wait_turn(session_id, timeout)
    return session_id


async def _round(world: LocalWorld, sessions: int, timeout: float) -> tuple[float, list[str], list[str]]:
    """N sessions at once; (seconds until every turn was durable, the ids, per-session tasks left)."""
    started = time.perf_counter()
    ids = await asyncio.gather(*(_one_session(world, index, timeout) for index in range(sessions)))
    elapsed = time.perf_counter() - started
    left = await wait_parked()
    return elapsed, list(ids), left


async def _isolated_round(world: LocalWorld, sessions: int, timeout: float) -> tuple[float, int, list[str]]:
    """A round in its own task, so no finished task or future of it stays referenced from the caller's frame.

    Returns (seconds, sessions that completed their turn, per-session tasks left).
    """

    async def body() -> tuple[float, int, list[str]]:
        elapsed, ids, left = await _round(world, sessions, timeout)
        completed = sum(1 for session_id in ids if world.store.boundaries.get(session_id, 0) >= 1)
        return elapsed, completed, left

    return await asyncio.create_task(body())


def _tasks() -> list[str]:
    """The live tasks other than the caller's; unnamed ones (the timer's `wait_for` inner task) as `(unnamed)`."""
    current = asyncio.current_task()
    names = [task.get_name() for task in asyncio.all_tasks() if task is not current]
    return sorted("(unnamed)" if name.startswith("Task-") else name for name in names)


async def measure(sessions: int, timeout: float) -> dict[str, Any]:
    async with local_world("concurrency") as world:
        await _isolated_round(world, WARMUP_SESSIONS, timeout)
        await world.settle()
        baseline_tasks = _tasks()

        # Round 1: timed, RSS.
        rss_before = rss_bytes()
        stats = world.store.stats
        transactions, jobs = stats.transactions, stats.jobs
        elapsed, completed, left = await _isolated_round(world, sessions, timeout)
        round_transactions, round_jobs = stats.transactions - transactions, stats.jobs - jobs
        parked_tasks = _tasks()
        await world.settle()
        rss_after = rss_bytes()

        # Round 2: RSS again, now that the burst's high-water mark is reached.
        _elapsed, completed_second, left_second = await _isolated_round(world, sessions, timeout)
        await world.settle()
        rss_second = rss_bytes()

        # Round 3: the same under tracemalloc, for the heap each parked session keeps.
        tracemalloc.start()
        gc.collect()
        heap_before = tracemalloc.get_traced_memory()[0]
        snapshot_before = tracemalloc.take_snapshot()
        _elapsed, traced_completed, traced_left = await _isolated_round(world, sessions, timeout)
        await world.settle()
        heap_after = tracemalloc.get_traced_memory()[0]
        snapshot_after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        retainers = [
            f"{'/'.join(Path(stat.traceback[0].filename).parts[-2:])}:{stat.traceback[0].lineno} "
            f"{stat.size_diff / sessions:+.0f} B"
            for stat in snapshot_after.compare_to(snapshot_before, "lineno")[:3]
        ]
        del snapshot_before, snapshot_after

        # Baseline: N single-row commits at once through the same writer.
        records = [world.runtime.new_record() for _ in range(sessions)]
        started = time.perf_counter()
        await asyncio.gather(*(world.store.create_session(record) for record in records))
        raw_elapsed = time.perf_counter() - started
        failures = world.store.failures

    return {
        "sessions": sessions,
        "seconds": elapsed,
        "turns_per_second": sessions / elapsed,
        "completed": completed,
        "failed_turns": failures,
        "completed_second": completed_second,
        "completed_traced": traced_completed,
        "session_tasks_left": left + left_second + traced_left,
        "baseline_tasks": baseline_tasks,
        "parked_tasks": parked_tasks,
        "transactions": round_transactions,
        "jobs": round_jobs,
        "heap_bytes_per_session": (heap_after - heap_before) / sessions,
        "rss_bytes_per_session": (rss_after - rss_before) / sessions,
        "rss_bytes_per_session_second": (rss_second - rss_after) / sessions,
        "retainers": retainers,
        "raw_commits_per_second": sessions / raw_elapsed,
    }


def run(sessions: int = 10_000, timeout: float = 300.0) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(sessions, timeout))


def report(figures: dict[str, Any]) -> None:
    n = figures["sessions"]
    all_done = figures["completed"] == figures["completed_second"] == figures["completed_traced"] == n
    all_done = all_done and not figures["failed_turns"]
    no_task = not figures["session_tasks_left"] and figures["parked_tasks"] == figures["baseline_tasks"]
    heap = figures["heap_bytes_per_session"]
    jobs_per_second = figures["jobs"] / figures["seconds"]
    print(
        f"{n:,} concurrent sessions, one process (target: all complete, no per-session task, "
        f"under {TARGET_BYTES_PER_SESSION // 1024} KB per parked session)"
    )
    print(
        f"  completed                    {figures['completed']:,}/{n:,} (rounds 2 and 3: "
        f"{figures['completed_second']:,}, {figures['completed_traced']:,}), {figures['failed_turns']} failed  "
        f"{verdict(all_done)}"
    )
    print(
        f"  total time                   {figures['seconds']:.2f} s, {figures['turns_per_second']:,.0f} turns/s "
        f"({figures['jobs']:,} store jobs in {figures['transactions']:,} group commits: {jobs_per_second:,.0f} jobs/s)"
    )
    print(
        f"  baseline: raw commits        {figures['raw_commits_per_second']:,.0f} single-row commits/s through the "
        f"same writer (turns ran {jobs_per_second / figures['raw_commits_per_second']:.2f}x of that in jobs/s)"
    )
    print(
        f"  tasks alive once parked      {len(figures['parked_tasks'])} {figures['parked_tasks']} vs "
        f"{len(figures['baseline_tasks'])} with no session; per-session tasks left: "
        f"{len(figures['session_tasks_left'])}  {verdict(no_task)}"
    )
    print(
        f"  memory per parked session    {heap / 1024:.2f} KB Python heap (tracemalloc)  "
        f"{verdict(heap < TARGET_BYTES_PER_SESSION)}"
    )
    print(
        f"  RSS delta per session        {figures['rss_bytes_per_session'] / 1024:.2f} KB in round 1 (the burst's "
        f"high-water mark), {figures['rss_bytes_per_session_second'] / 1024:.2f} KB in round 2 (information)"
    )
    print(f"  largest heap growth per session: {', '.join(figures['retainers'])}")


def main() -> None:
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    report(run(sessions))


if __name__ == "__main__":
    main()
