"""Store bytes per step over one long session: the last 100 steps must cost no more than the second 100.

Measured: one session of the template app on the offline `test` model over a `SqliteStore` in
`.eve/bench/`, driven through 500 steps as 250 tool-calling turns (`/call get_weather`, then the
answer: 2 steps each). The database size is read at step 0 (the session created, no message yet),
100, 200, 400 and 500, in two ways, from a separate read connection (which sees the WAL's committed
pages, so no checkpoint is needed):

- *pages*: `(page_count - freelist_count) * page_size`, the bytes the database occupies;
- *payload*: the sum of `payload` over SQLite's `dbstat` virtual table (the bytes of the rows and
  index entries themselves, without page slack), when this SQLite has `dbstat`.

Target (DESIGN.md): flat, the last 100 steps cost no more than earlier ones (ratio <= 1, within
noise: a few pages of B-tree slack either way). The baseline is the session's own second 100 steps,
in the same run: the first 100 fill the slack of the pages allocated while the session was
created, so they occupy about 3% fewer pages than any later window (measured over 1,000 steps in
windows of 100: 3,564 bytes a step, then 3,686-3,850 with no trend). The first window's figures
are printed too. Also printed, for information: the turn time per step over the same two windows
(a parked session is reloaded at every turn, so a time that grows with the session shows up here).

Run: `.venv/bin/python bench/store_growth.py [steps]` (a multiple of 10; windows are a fifth of it)
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import TOOL_TURN, local_world, median, verdict
from eve_runtime.serving import event_loop

TARGET_RATIO = 1.0
NOISE_BYTES = 2 * 4096
"""Two pages: B-tree splits land unevenly, so a window may carry a page or two more than the other."""
STEPS_PER_TURN = 2


class SizeReader:
    """Reads the database's size from its own connection (read-only queries only)."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        try:
            self.conn.execute("SELECT 1 FROM dbstat LIMIT 1").fetchall()
            self.has_dbstat = True
        except sqlite3.Error:
            self.has_dbstat = False

    def pages(self) -> int:
        page_count = int(self.conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(self.conn.execute("PRAGMA freelist_count").fetchone()[0])
        page_size = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        return (page_count - free) * page_size

    def payload(self) -> dict[str, int]:
        """Payload bytes per table or index (empty without `dbstat`)."""
        if not self.has_dbstat:
            return {}
        rows = self.conn.execute("SELECT name, SUM(payload) FROM dbstat GROUP BY name").fetchall()
        return {str(name): int(total or 0) for name, total in rows}

    def close(self) -> None:
        self.conn.close()


async def measure(steps: int) -> dict[str, Any]:
    if steps % (5 * STEPS_PER_TURN) or steps < 5 * STEPS_PER_TURN:
        raise ValueError(f"steps must be a positive multiple of {5 * STEPS_PER_TURN}, got {steps}")
    window = steps // 5
    turns = steps // STEPS_PER_TURN
    marks = {0, window, 2 * window, steps - window, steps}
    async with local_world("store-growth") as world:
        reader = SizeReader(world.store.path)
        try:
            session = await world.create()
            pages: dict[int, int] = {0: reader.pages()}
            payload: dict[int, dict[str, int]] = {0: reader.payload()}
            step_seconds: list[float] = []
            for turn in range(1, turns + 1):
                started = time.perf_counter()
                await world.turn(session, TOOL_TURN)
                step_seconds.extend([(time.perf_counter() - started) / STEPS_PER_TURN] * STEPS_PER_TURN)
                done = turn * STEPS_PER_TURN
                if done in marks:
                    pages[done] = reader.pages()
                    payload[done] = reader.payload()
            completed = world.store.boundaries.get(session, 0)
            failures = world.store.failures
            events = await world.store.event_count(session)
            history = len(await world.store.load_history(session))
        finally:
            reader.close()

    def delta(sizes: dict[int, int], start: int, end: int) -> int:
        return sizes[end] - sizes[start]

    totals = {mark: sum(tables.values()) for mark, tables in payload.items()}
    names = sorted(set(payload[0]) | set(payload[steps]))
    first = (0, window)
    base = (window, 2 * window)
    last = (steps - window, steps)
    return {
        "steps": steps,
        "window": window,
        "turns_completed": completed,
        "expected_turns": turns,
        "failed_turns": failures,
        "events": events,
        "history_messages": history,
        "has_dbstat": reader.has_dbstat,
        "pages_first": delta(pages, *first),
        "pages_base": delta(pages, *base),
        "pages_last": delta(pages, *last),
        "payload_first": delta(totals, *first) if reader.has_dbstat else None,
        "payload_base": delta(totals, *base) if reader.has_dbstat else None,
        "payload_last": delta(totals, *last) if reader.has_dbstat else None,
        "payload_tables_base": {n: payload[2 * window].get(n, 0) - payload[window].get(n, 0) for n in names},
        "payload_tables_last": {n: payload[steps].get(n, 0) - payload[steps - window].get(n, 0) for n in names},
        "step_ms_base": median(step_seconds[window : 2 * window]) * 1000,
        "step_ms_last": median(step_seconds[-window:]) * 1000,
        "database_bytes": pages[steps],
    }


def run(steps: int = 500) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(steps))


def report(figures: dict[str, Any]) -> None:
    window = figures["window"]
    print(
        f"store growth over one {figures['steps']}-step session ({figures['expected_turns']} tool turns; target: the "
        f"last {window} steps cost no more than the second {window}, steps {window}-{2 * window})"
    )
    print(f"  {'':<34} {'first':>9} {'second':>9} {'last':>9}  {'last/second':>11}")
    lines = [("pages (bytes per step)", "pages")]
    if figures["has_dbstat"]:
        lines.append(("dbstat payload (bytes per step)", "payload"))
    for label, key in lines:
        first, base, last = (figures[f"{key}_{part}"] for part in ("first", "base", "last"))
        ok = last <= base * TARGET_RATIO + NOISE_BYTES
        print(
            f"  {label:<34} {first / window:9.0f} {base / window:9.0f} {last / window:9.0f}  "
            f"{last / base:10.2f}x  {verdict(ok)}"
        )
    if figures["has_dbstat"]:
        base_tables, last_tables = figures["payload_tables_base"], figures["payload_tables_last"]
        grown = [
            f"{name} {base_tables[name] / window:.0f}->{last_tables[name] / window:.0f}"
            for name in base_tables
            if base_tables[name] or last_tables[name]
        ]
        print(f"  payload per step by table/index, second -> last window: {', '.join(grown)}")
    else:
        print("  (this SQLite has no dbstat: only the page figure)")
    print(
        f"  turn time per step (information)   {figures['step_ms_base']:8.3f}ms  {figures['step_ms_last']:8.3f}ms  "
        f"{figures['step_ms_last'] / figures['step_ms_base']:9.2f}x"
    )
    print(
        f"  end: {figures['database_bytes'] / 1024:.0f} KiB, {figures['events']:,} events, "
        f"{figures['history_messages']:,} history messages, "
        f"{figures['turns_completed']}/{figures['expected_turns']} turns ended, {figures['failed_turns']} failed"
    )


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    report(run(steps))


if __name__ == "__main__":
    main()
