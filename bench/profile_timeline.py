"""Where a turn's wall time goes on the local world: the event loop's work, the writer's, the commit, the hand-offs.

Runs sequential echo turns (one step) and tool turns (two steps) on the template app with the
offline `test` model over a `SqliteStore` in `.eve/bench/` (as `bench/step_overhead.py`), with
time stamps (`time.perf_counter_ns`) taken where the work changes hands:

- on the event loop: when a store job is queued for the writer thread (`ConnectionThread._put`),
  when an early-told message's result reaches the loop (`SqliteWriter._told`), when a model call
  starts and ends (`ModelCall._stream`), when the emitter begins a commit (`Emitter.commit`), when
  the writer's results are resolved (`SqliteWriter._resolve`), and when the turn's end was seen;
- on the writer thread: when it takes a batch (`_handle`), when it runs a job that joined an open
  transaction (`_in_savepoint`), and when COMMIT returned (`_keep_wal_small` runs right after).

For each kind of turn it prints the median time of every phase between two stamps, over the turns
whose stamps came in the most common order, named by what happens in it, and a summary: the
loop's own work, the writer's SQL, COMMIT (the fsync), and the hand-offs between the threads (a
job queued until the writer runs it, a result posted until the loop runs it: these include the
other thread finishing what it was doing, which the GIL serialises). The raw full-sync commit of
`bench/step_overhead.py`, measured in the same run, is the baseline. The stamps cost about a
microsecond each.

Run: `.venv/bin/python bench/profile_timeline.py [turns]`
"""

from __future__ import annotations

import collections
import functools
import inspect
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import TOOL_TURN, LocalWorld, RawCommit, local_world, median
from eve_runtime.engine import emitter, model_call
from eve_runtime.serving import event_loop
from eve_runtime.store import sqlite_thread, sqlite_writer

Stamp = tuple[str, int]

PHASES: dict[tuple[str, str], tuple[str, str]] = {
    ("start", "queued"): ("loop", "deliver: the message's job queued"),
    ("queued", "writer takes"): ("hand-off", "to the writer"),
    ("writer takes", "told"): ("writer", "BEGIN, the message's insert, its result posted"),
    ("told", "model call"): ("loop", "the turn starts: the actor, the opening events"),
    ("model call", "model done"): ("loop", "the model call (test model) and its events"),
    ("model done", "commit"): ("loop", "the step's end"),
    ("commit", "queued"): ("loop", "the commit's event lines and state"),
    ("queued", "joined"): ("hand-off", "to the writer"),
    ("joined", "committed"): ("writer", "the turn's rows, then COMMIT"),
    ("writer takes", "committed"): ("writer", "BEGIN, the rows, COMMIT"),
    ("committed", "resolved"): ("hand-off", "back to the loop"),
    ("resolved", "model call"): ("loop", "the next step starts (the tool's result)"),
    ("resolved", "done"): ("loop", "the turn's end is seen"),
}
"""Phase names by their stamps: (who does the work, what it is)."""


class Recorder:
    """Time stamps of one turn, from the loop and the writer thread (list appends are atomic)."""

    def __init__(self) -> None:
        self.stamps: list[Stamp] = []

    def mark(self, name: str) -> None:
        self.stamps.append((name, time.perf_counter_ns()))

    def wrap(self, owner: Any, attribute: str, before: str | None, after: str | None = None) -> Callable[[], None]:
        """Stamp around `owner.attribute` (a function or a coroutine function); returns the undo."""
        original = getattr(owner, attribute)
        mark = self.mark

        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def stamped_async(*args: Any, **kwargs: Any) -> Any:
                if before:
                    mark(before)
                try:
                    return await original(*args, **kwargs)
                finally:
                    if after:
                        mark(after)

            setattr(owner, attribute, stamped_async)
        else:

            @functools.wraps(original)
            def stamped(*args: Any, **kwargs: Any) -> Any:
                if before:
                    mark(before)
                try:
                    return original(*args, **kwargs)
                finally:
                    if after:
                        mark(after)

            setattr(owner, attribute, stamped)
        return lambda: setattr(owner, attribute, original)


@contextmanager
def stamped(recorder: Recorder) -> Iterator[None]:
    """The stamps of the module docstring, in place while the block runs."""
    undo = [
        recorder.wrap(sqlite_thread.ConnectionThread, "_put", "queued"),
        recorder.wrap(sqlite_writer.SqliteWriter, "_handle", "writer takes"),
        recorder.wrap(sqlite_writer.SqliteWriter, "_told", "told"),
        recorder.wrap(sqlite_writer, "_in_savepoint", "joined"),
        recorder.wrap(sqlite_writer.SqliteWriter, "_keep_wal_small", "committed"),
        recorder.wrap(sqlite_writer.SqliteWriter, "_resolve", "resolved"),
        recorder.wrap(model_call.ModelCall, "_stream", "model call", "model done"),
        recorder.wrap(emitter.Emitter, "commit", "commit"),
    ]
    try:
        yield
    finally:
        for restore in reversed(undo):
            restore()


async def _turns(world: LocalWorld, message: str, turns: int, recorder: Recorder) -> list[list[Stamp]]:
    session = await world.create()
    for _ in range(20):  # warm up, unstamped
        await world.turn(session, message)
    traces = []
    with stamped(recorder):
        for _ in range(turns):
            recorder.stamps = [("start", time.perf_counter_ns())]
            await world.turn(session, message)
            recorder.mark("done")
            traces.append(recorder.stamps)
    return traces


def phases(traces: list[list[Stamp]]) -> dict[str, Any]:
    """Median phases over the traces of the most common shape, and the totals by who did the work."""
    shapes = collections.Counter(tuple(name for name, _ in trace) for trace in traces)
    shape, count = shapes.most_common(1)[0]
    chosen = [trace for trace in traces if tuple(name for name, _ in trace) == shape]
    rows = []
    totals: dict[str, float] = collections.defaultdict(float)
    for index in range(1, len(shape)):
        micros = median([(trace[index][1] - trace[index - 1][1]) / 1000 for trace in chosen])
        who, what = PHASES.get((shape[index - 1], shape[index]), ("loop", f"{shape[index - 1]} -> {shape[index]}"))
        rows.append((who, what, micros))
        totals[who] += micros
    whole = median([(trace[-1][1] - trace[0][1]) / 1000 for trace in chosen])
    return {"rows": rows, "totals": dict(totals), "whole": whole, "shape_share": count / len(traces)}


async def measure(turns: int) -> dict[str, Any]:
    """Stamped echo and tool turns, and the raw commit (microseconds)."""
    recorder = Recorder()
    async with local_world("timeline") as world:
        raw = RawCommit(world.directory)
        try:
            commits = [raw.sample() for _ in range(50)]
            echo = phases(await _turns(world, "hello", turns, recorder))
            tool = phases(await _turns(world, TOOL_TURN, turns, recorder))
            commits += [raw.sample() for _ in range(50)]
        finally:
            raw.close()
    return {"turns": turns, "raw_commit_us": median(commits) * 1e6, "echo": echo, "tool": tool}


def report(figures: dict[str, Any]) -> None:
    print(
        f"where a turn's time goes (local world, {figures['turns']} turns of each kind; "
        f"raw full-sync commit {figures['raw_commit_us']:.0f} us in the same run)"
    )
    for kind in ("echo", "tool"):
        result = figures[kind]
        print(f"  {kind} turn: {result['whole']:.0f} us ({result['shape_share']:.0%} of the turns in this order)")
        for who, what, micros in result["rows"]:
            print(f"    {micros:7.0f} us  {who:<9} {what}")
        summary = ", ".join(f"{who} {micros:.0f} us" for who, micros in sorted(result["totals"].items()))
        print(f"    all told: {summary}")


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    report(event_loop.run(measure(turns)))


if __name__ == "__main__":
    main()
