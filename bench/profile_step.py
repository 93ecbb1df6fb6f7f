"""Where a step's time goes: echo and tool turns on the local world under cProfile, plus CPU per step.

Runs the same turns as `bench/step_overhead.py` (the template app on the offline `test` model over
a `SqliteStore` in `.eve/bench/`), first untimed to warm up, then:

1. CPU per step without the profiler, on the serving loop (`eve_runtime.serving.event_loop`): the
   process's CPU time (all threads: the event loop, the store's writer and reader) over the
   measured turns, divided by the steps, beside the wall time per step and the CPU time of one
   raw SQLite full-sync commit (the baseline, same run).
2. A cProfile of the event loop's thread over the same turns, printed by own time (`tottime`) and
   by cumulative time, restricted to the top `limit` rows. The writer thread is not profiled by
   cProfile (its time shows as the wall time spent awaiting the commit future); run
   `py-spy record --native -- .venv/bin/python bench/profile_step.py` for both threads, or
   `valgrind --tool=callgrind` for instruction counts that are repeatable on a noisy machine.

Run: `.venv/bin/python bench/profile_step.py [turns] [limit] [--sort tottime|cumulative]`
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import TOOL_TURN, LocalWorld, RawCommit, local_world, median
from eve_runtime.serving import event_loop


async def _turns(world: LocalWorld, echo: str, tool: str, turns: int) -> None:
    for index in range(turns):
        await world.turn(echo, f"hello {index}")
        await world.turn(tool, TOOL_TURN)


async def measure(turns: int, limit: int) -> dict[str, Any]:
    """Warm up, measure CPU per step, then profile the same turns; the figures and the profile text."""
    async with local_world("profile-step") as world:
        raw = RawCommit(world.directory)
        try:
            echo = await world.create()
            tool = await world.create()
            await _turns(world, echo, tool, max(5, turns // 10))
            raw_cpu = []
            for _ in range(50):
                started = time.process_time()
                raw.sample()
                raw_cpu.append(time.process_time() - started)
            cpu_started, wall_started, loop_started = time.process_time(), time.perf_counter(), time.thread_time()
            await _turns(world, echo, tool, turns)
            cpu, wall = time.process_time() - cpu_started, time.perf_counter() - wall_started
            loop_cpu = time.thread_time() - loop_started
            profiler = cProfile.Profile(time.thread_time)  # the loop thread's CPU: awaits and hand-offs cost nothing
            profiler.enable()
            await _turns(world, echo, tool, turns)
            profiler.disable()
        finally:
            raw.close()
    steps = turns * 3  # an echo turn is one step, a tool turn two
    texts = {}
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(key).print_stats(limit)
        texts[key] = out.getvalue()
    return {
        "turns": turns,
        "steps": steps,
        "cpu_ms_per_step": cpu / steps * 1000,
        "wall_ms_per_step": wall / steps * 1000,
        "raw_commit_cpu_ms": median(raw_cpu) * 1000,
        "loop_cpu_ms_per_step": loop_cpu / steps * 1000,
        "loop_idle_ms_per_step": (wall - loop_cpu) / steps * 1000,
        "profile": texts,
    }


def run(turns: int = 200, limit: int = 40) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(turns, limit))


def report(figures: dict[str, Any], sort: str = "tottime") -> None:
    print(f"profile of {figures['turns']} echo + {figures['turns']} tool turns ({figures['steps']} steps), local world")
    print(
        f"  CPU per step (all threads, no profiler): {figures['cpu_ms_per_step']:.3f} ms; wall per step "
        f"{figures['wall_ms_per_step']:.3f} ms; one raw full-sync commit: {figures['raw_commit_cpu_ms']:.3f} ms CPU"
    )
    print(
        f"  of which the event loop's thread: {figures['loop_cpu_ms_per_step']:.3f} ms CPU; the loop waited "
        f"(not running: the store's threads, the disk, the GIL) {figures['loop_idle_ms_per_step']:.3f} ms per step"
    )
    print(figures["profile"][sort])


def main() -> None:
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    sort = "cumulative" if "--sort" in sys.argv and sys.argv[-1] == "cumulative" else "tottime"
    turns = int(args[0]) if args else 200
    limit = int(args[1]) if len(args) > 1 else 40
    report(run(turns, limit), sort)


if __name__ == "__main__":
    main()
