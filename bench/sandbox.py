"""Sandbox costs: a `bash echo` round trip through a session, and the first use of a fresh sandbox.

Both against a bare subprocess (`/bin/bash -c "echo hi"` through asyncio) measured in the same run:

- **round trip**: one turn on the template app (`test` model) calling `bash {"command": "echo hi"}`
  in a session whose sandbox already exists: the model's tool call, the sandboxed command, the
  result, the reply, every event durable in the local world's SQLite store;
- **first use**: the same turn as the first of a new session, whose sandbox is created on the
  way (its folder prepared, then the command), and `Workspaces.open()` alone on a fresh id
  (preparing the folder, nothing run);
- **the command alone**: `sandbox.run("echo hi")` on a prepared sandbox (the backend's own cost:
  for bubblewrap, setting up its namespaces and mounts);
- for reference, the same turn calling the template's Python tool (`get_weather`) instead.

Prints medians and ratios, asserts nothing about time. Run: `.venv/bin/python bench/sandbox.py [turns]`
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import local_world, median
from eve_runtime.authoring.sandbox import define_sandbox
from eve_runtime.sandbox import SandboxSpec, describe_backend
from eve_runtime.sandbox.workspaces import Workspaces

ECHO_TURN = '/call bash {"command": "echo hi"}'
PYTHON_TURN = '/call get_weather {"city": "Paris"}'


async def bare_subprocess(samples: int) -> list[float]:
    """Seconds per `bash -c "echo hi"` as a plain asyncio subprocess (the baseline)."""
    times = []
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for _ in range(samples):
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            "/bin/bash", "-c", "echo hi", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
        )
        await process.communicate()
        times.append(time.perf_counter() - started)
    return times


Figures = tuple[list[float], list[float], list[float], list[float], list[float], str]


async def session_turns(turns: int, fresh: int) -> Figures:
    """Warm round trips, first-use round trips, fresh `Workspaces.open`, `sandbox.run`, Python-tool turns; backend."""
    async with local_world("sandbox") as world:
        assert world.app.root is not None and world.app.root.sandbox is not None
        backend, _ = describe_backend(world.app.root.sandbox.config)
        session = await world.create(ECHO_TURN)
        await world.wait_turn(session)  # the sandbox now exists
        warm = []
        for _ in range(turns):
            started = time.perf_counter()
            await world.turn(session, ECHO_TURN)
            warm.append(time.perf_counter() - started)
        python = []
        for _ in range(turns):
            started = time.perf_counter()
            await world.turn(session, PYTHON_TURN)
            python.append(time.perf_counter() - started)
        first = []
        for _ in range(fresh):
            started = time.perf_counter()
            other = await world.create(ECHO_TURN)
            await world.wait_turn(other)
            first.append(time.perf_counter() - started)
        workspaces = Workspaces(world.directory / "bench-sandboxes")
        spec = SandboxSpec(config=define_sandbox())
        opens = []
        for n in range(fresh):
            started = time.perf_counter()
            sandbox = await workspaces.open(f"wrun_bench{n}", spec)
            opens.append(time.perf_counter() - started)
        runs = []
        for _ in range(turns):
            started = time.perf_counter()
            await sandbox.run("echo hi")
            runs.append(time.perf_counter() - started)
    return warm, first, opens, runs, python, backend


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    fresh = max(5, turns // 4)

    async def measure() -> tuple[list[float], Figures]:
        baseline = await bare_subprocess(turns)
        return baseline, await session_turns(turns, fresh)

    baseline, (warm, first, opens, runs, python, backend) = asyncio.run(measure())
    base = median(baseline)

    def row(label: str, values: list[float]) -> None:
        value = median(values)
        print(f"  {label:<48} {value * 1000:8.2f} ms  ({value / base:5.1f}x the bare subprocess)")

    print(f"sandbox: backend {backend}, {turns} warm turns, {fresh} fresh sandboxes (medians)")
    label = 'bare subprocess: bash -c "echo hi" (baseline)'
    print(f"  {label:<48} {base * 1000:8.2f} ms")
    row("sandbox.run('echo hi'), prepared sandbox", runs)
    row("bash echo round trip through a session", warm)
    row("the same turn with a Python tool (get_weather)", python)
    row("first turn of a new session (new sandbox)", first)
    row("Workspaces.open() of a fresh sandbox", opens)
    print(f"  first use costs {(median(first) - median(warm)) * 1000:+.2f} ms over a warm turn")


if __name__ == "__main__":
    main()
