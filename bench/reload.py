"""Hot reload: from saving a tool file to the new generation serving a turn, against one compile.

The template app runs in a scratch local world with `eve dev`'s reloader watching it. Each round
saves `agent/tools/get_weather.py` with a new answer and measures the time until a turn run just
after the save returns that answer (the watcher's debounce, the rebuild and the turn included).
Baseline: one `compile_app` of the same app in the same run. Target (issue 5): under 300 ms.

Run: `.venv/bin/python bench/reload.py [rounds]`
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import local_world, median, percentile, verdict
from eve_runtime.project.compiler import compile_app
from eve_runtime.serving import event_loop
from eve_runtime.serving.reloader import Reloader

TARGET_MS = 300.0
TOOL = '''def get_weather(city: str) -> dict[str, str | int]:
    """Get the current weather for a city."""
    return {{"city": city, "condition": "round {round}", "temperatureF": 72}}
'''


async def run(rounds: int) -> dict[str, float]:
    async with local_world("reload") as world:
        app_root = world.app.paths.app_root
        tool = app_root / "agent" / "tools" / "get_weather.py"
        compiles = []
        for _ in range(5):
            started = time.perf_counter()
            compiled = compile_app(app_root, write=False)
            compiles.append((time.perf_counter() - started) * 1000)
            compiled.loader.release()
        reloader = Reloader(app_root, world.runtime, world.app)
        stop = asyncio.Event()
        watcher = asyncio.create_task(reloader.run(stop))
        await asyncio.sleep(0.3)  # the watcher is set up
        session = await world.create()
        saves: list[float] = []
        try:
            for round_ in range(1, rounds + 1):
                generation = reloader.generation
                started = time.perf_counter()
                tool.write_text(TOOL.format(round=round_))
                while reloader.generation == generation:
                    await asyncio.sleep(0.002)
                await world.turn(session, '/call get_weather {"city": "Paris"}')
                saves.append((time.perf_counter() - started) * 1000)
                events = await world.store.read_events(session)
                answered = [e.line for e in events if e.type == "action.result"][-1]
                assert f"round {round_}".encode() in answered, "the turn ran an old generation"
        finally:
            stop.set()
            await asyncio.wait_for(watcher, 5)
    return {
        "compile_ms": median(compiles),
        "save_to_turn_ms": median(saves),
        "save_to_turn_p90_ms": percentile(saves, 90),
        "rounds": float(rounds),
    }


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    figures = event_loop.run(run(rounds))
    compile_ms, save_ms = figures["compile_ms"], figures["save_to_turn_ms"]
    print(
        f"hot reload, {rounds} saves of a tool file (target: save to a turn on the new code under {TARGET_MS:.0f} ms)"
    )
    print(f"  one compile of the app (baseline)       {compile_ms:7.1f} ms")
    print(
        f"  save -> new generation serves a turn    {save_ms:7.1f} ms median, "
        f"{figures['save_to_turn_p90_ms']:.1f} ms p90  ({save_ms / compile_ms:.1f}x a compile; "
        f"{verdict(save_ms < TARGET_MS)})"
    )


if __name__ == "__main__":
    main()
