"""Round trips to Postgres and the loop thread's CPU per turn in the Postgres world.

Runs sequential echo turns (one step) and tool turns (two steps) on the template app with the
offline `test` model over a `PostgresStore` in a scratch schema, leases on (as
`bench/postgres.py` does), with libpq's protocol trace on every connection the store opens (its
pool and its listener). After a warm-up it prints, per turn of each kind:

- round trips: the messages the client sent that wait for the server's answer (`Sync` of the
  extended protocol, a simple `Query`), over all connections;
- statements: `Execute` and simple `Query` messages (in a pipeline, several per round trip);
- notifications the listener received;
- which statements they were (the first words of each, counted);
- the event loop thread's CPU (`time.thread_time`) per turn, measured in a run of its own without
  the trace (five times as many turns).

Skips (exit 0, with a message) when PostgreSQL is unreachable (`EVE_BENCH_DATABASE_URL`, as
`bench/postgres.py`).

Run: `.venv/bin/python bench/postgres_trips.py [turns]`
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import TOOL_TURN, scratch_dir
from bench.postgres import _turn, postgres_world, scratch_schema, unreachable
from eve_runtime.serving import event_loop
from eve_runtime.sessions.runtime import Runtime

_MESSAGE = re.compile(r"^F\s+\d+\s+(\w+)(.*)$")
_NOTIFY = re.compile(r"^B\s+\d+\s+NotificationResponse")


class Tracer:
    """libpq's trace of every psycopg connection opened while installed (one file each)."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="eve-pg-trace-")
        self._files: list[Any] = []
        self._names: dict[tuple[int, str], str] = {}  # prepared statements: (file, name) -> their SQL
        self._original: Any = None

    def install(self) -> None:
        import psycopg

        original = psycopg.AsyncConnection.connect.__func__  # type: ignore[attr-defined]
        tracer = self

        async def connect(cls: Any, *args: Any, **kwargs: Any) -> Any:
            conn = await original(cls, *args, **kwargs)
            handle = open(os.path.join(tracer._dir.name, f"{len(tracer._files)}.trace"), "w+b", buffering=0)
            tracer._files.append(handle)
            conn.pgconn.trace(handle.fileno())
            conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS | psycopg.pq.Trace.REGRESS_MODE)
            return conn

        psycopg.AsyncConnection.connect = classmethod(connect)  # type: ignore[method-assign,assignment]
        self._original = original

    def uninstall(self) -> None:
        """Connections opened from now on are not traced; close the trace files."""
        import psycopg

        psycopg.AsyncConnection.connect = classmethod(self._original)  # type: ignore[method-assign,assignment]
        for handle in self._files:
            handle.close()
        self._dir.cleanup()

    def mark(self) -> list[int]:
        """Where every trace file ends now."""
        return [os.fstat(handle.fileno()).st_size for handle in self._files]

    def since(self, marks: list[int]) -> dict[str, Any]:
        """Counts of what was sent and received after `marks` (see the module docstring)."""
        trips = statements = notifies = 0
        kinds: collections.Counter[str] = collections.Counter()
        for number, handle in enumerate(self._files):
            start = marks[number] if number < len(marks) else 0
            handle.seek(0)
            text = handle.read()
            for raw in text[:start].decode("utf-8", "replace").splitlines():  # the statements prepared before
                found = _MESSAGE.match(raw)
                if found is not None and found.group(1) == "Parse":
                    name, sql = _quoted(found.group(2))
                    if name:
                        self._names[(number, name)] = _words(sql)
            pending_parse = ""
            for raw in text[start:].decode("utf-8", "replace").splitlines():
                if _NOTIFY.match(raw):
                    notifies += 1
                    continue
                found = _MESSAGE.match(raw)
                if found is None:
                    continue
                kind, rest = found.groups()
                if kind in ("Sync", "Query"):
                    trips += 1
                if kind == "Parse":
                    name, sql = _quoted(rest)
                    pending_parse = _words(sql)
                    if name:
                        self._names[(number, name)] = pending_parse
                elif kind == "Bind":
                    name = _quoted(rest)[1]
                    kinds[self._names.get((number, name), "") if name else pending_parse] += 1
                    statements += 1
                    pending_parse = ""
                elif kind == "Query":
                    kinds[_words(rest)] += 1
                    statements += 1
        return {"trips": trips, "statements": statements, "notifies": notifies, "kinds": kinds}


def _quoted(rest: str) -> tuple[str, str]:
    """The first two quoted strings of a traced message (a Parse: name and SQL; a Bind: portal and name)."""
    quoted = re.findall(r'"((?:[^"]|"")*)"', rest)
    return (quoted + ["", ""])[0], (quoted + ["", ""])[1]


def _words(sql: str) -> str:
    return " ".join(sql.split()[:6])[:80]


async def _session_turns(store: Any, runtime: Runtime, echo: str, tool: str, done: int, turns: int) -> None:
    for index in range(turns):
        await _turn(store, runtime, echo, f"hello {done + index}", done + index + 1)
        await _turn(store, runtime, tool, TOOL_TURN, done + index + 1)


async def measure_cpu(turns: int, warmup: int) -> dict[str, float]:
    """The loop thread's CPU per echo turn and per tool turn (no trace)."""
    with scratch_dir("postgres-trips") as root, scratch_schema() as schema:
        async with postgres_world(schema, root) as (store, runtime):
            echo = (await runtime.create_session()).id
            tool = (await runtime.create_session()).id
            await _session_turns(store, runtime, echo, tool, 0, warmup)
            cpu = {}
            for kind, session, message in (("echo", echo, "hi"), ("tool", tool, TOOL_TURN)):
                started = time.thread_time()
                for index in range(turns):
                    text = f"{message} {index}" if kind == "echo" else message
                    await _turn(store, runtime, session, text, warmup + index + 1)
                cpu[kind] = (time.thread_time() - started) / turns
    return cpu


async def measure_trips(turns: int, warmup: int) -> dict[str, Any]:
    """What each turn sent and received, over every connection the store opened (libpq's trace)."""
    tracer = Tracer()
    tracer.install()
    try:
        return await _traced_turns(tracer, turns, warmup)
    finally:
        tracer.uninstall()


async def _traced_turns(tracer: Tracer, turns: int, warmup: int) -> dict[str, Any]:
    with scratch_dir("postgres-trips") as root, scratch_schema() as schema:
        async with postgres_world(schema, root) as (store, runtime):
            echo = (await runtime.create_session()).id
            tool = (await runtime.create_session()).id
            await _session_turns(store, runtime, echo, tool, 0, warmup)
            figures: dict[str, Any] = {}
            for kind, session, message in (("echo", echo, "hello"), ("tool", tool, TOOL_TURN)):
                totals: dict[str, Any] = {"trips": 0, "statements": 0, "notifies": 0, "kinds": collections.Counter()}
                for index in range(turns):
                    marks = tracer.mark()
                    text = f"{message} {index}" if kind == "echo" else message
                    await _turn(store, runtime, session, text, warmup + index + 1)
                    await asyncio.sleep(0.05)  # what a turn leaves running after its last commit
                    got = tracer.since(marks)
                    for key in ("trips", "statements", "notifies"):
                        totals[key] += got[key]
                    totals["kinds"].update(got["kinds"])
                figures[kind] = totals
    return figures


def report(figures: dict[str, Any], cpu: dict[str, float], turns: int) -> None:
    print(f"Postgres world: per turn, over {turns} turns of each kind (trace of every store connection)")
    for kind in ("echo", "tool"):
        got = figures[kind]
        print(
            f"  {kind} turn: {got['trips'] / turns:.2f} round trips, {got['statements'] / turns:.2f} statements, "
            f"{got['notifies'] / turns:.2f} notifications received; loop CPU {cpu[kind] * 1000:.3f} ms"
        )
        for sql, n in got["kinds"].most_common():
            print(f"      {n / turns:5.2f}  {sql}")


def main() -> None:
    reason = unreachable()
    if reason is not None:
        print(f"skipped: {reason}")
        return
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    cpu = event_loop.run(measure_cpu(turns * 5, warmup=10))
    report(event_loop.run(measure_trips(turns, warmup=10)), cpu, turns)


if __name__ == "__main__":
    main()
