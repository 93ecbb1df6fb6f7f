"""Recovery: 1,000 sessions interrupted mid-turn by kill -9, and how fast a restart resumes them all.

A real `eve start` process serves N sessions whose turns stream slowly (the `test` model's
`/delay`); once every turn is under way the process is killed with SIGKILL and started again.
Figures: time from the restart to the listening line, to every session showing a new event
(resumed), and to every turn completed; baseline: the start time of the same app with no
sessions, measured in the same run. Target (DESIGN.md): all resumed within 2 s of the restart.

Run: `.venv/bin/python bench/recovery.py [sessions]`

One snapshot restarted many times (to compare builds in one window, or to profile the restart):
`bench/recovery.py --save DIR [sessions]` keeps the killed app and its store in DIR;
`bench/recovery.py --restart DIR [--rounds N] [--profile FILE]` restarts a fresh copy of it each
round and prints when it listened, when every interrupted session showed a new event, and the
process's CPU seconds by then (`--profile`: under cProfile until every session resumed).
Run it with `PYTHONPATH=/work/OLD/runtime:/work/OLD` to time another build on the same snapshot.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.crash.harness import Client, EveProcess, check, scaffold

TARGET_SECONDS = 2.0
BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}
"""The servers write and reuse Python's bytecode caches, as an installed eve does: this machine sets
PYTHONDONTWRITEBYTECODE=1, under which every start compiled eve's modules again (0.3 s of the restart)."""
_PROFILED = """
import cProfile, runpy, signal, sys
profile, out = cProfile.Profile(), sys.argv.pop(1)
def dump(*_):
    profile.disable()
    profile.dump_stats(out)
signal.signal(signal.SIGUSR1, dump)
sys.argv[0] = "eve"
profile.enable()
runpy.run_module("eve_cli", run_name="__main__")
"""
"""`eve` under cProfile until SIGUSR1, when the profile is written (the main thread's: not the store's threads)."""


def _event_counts(database: Path | str) -> dict[str, int]:
    """Events per session, read straight from the store (WAL lets a SQLite reader in beside the server)."""
    query = "SELECT session_id, MAX(idx) + 1 FROM events GROUP BY session_id"
    if isinstance(database, str):  # a Postgres connection string
        import psycopg

        with psycopg.connect(database, autocommit=True) as pg_conn:
            rows = pg_conn.execute(query).fetchall()
    else:
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
            rows = conn.execute(query).fetchall()
    return {row[0]: int(row[1]) for row in rows}


def _last_types(database: Path | str) -> dict[str, str]:
    """The type of each session's newest event."""
    query = (
        "SELECT e.session_id, e.type FROM events e JOIN (SELECT session_id, MAX(idx) AS idx FROM events "
        "GROUP BY session_id) m ON e.session_id = m.session_id AND e.idx = m.idx"
    )
    if isinstance(database, str):
        import psycopg

        with psycopg.connect(database, autocommit=True) as pg_conn:
            rows = pg_conn.execute(query).fetchall()
    else:
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
            rows = conn.execute(query).fetchall()
    return {str(row[0]): str(row[1]) for row in rows}


def _words(sessions: int) -> str:
    # Creating a session takes a few ms here under the load of the turns already running: a turn must
    # outlast the creation of all of them (a third of a word per session; 1,000 sessions: 67 s).
    return " ".join(f"w{n}" for n in range(max(100, sessions // 3)))


def _compile_eve() -> None:
    """Write the bytecode caches of the eve the servers run (their first start would otherwise pay for them).

    In a child process, which finds eve as the servers do (`PYTHONPATH` first, not this repository).
    """
    script = (
        "import compileall, os, eve_cli, eve_runtime\n"
        "for m in (eve_cli, eve_runtime): compileall.compile_dir(os.path.dirname(m.__file__), quiet=1)"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a running process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _last_rowid(database: Path | str) -> int:
    """The newest event row of a SQLite store (0 for Postgres, polled otherwise)."""
    if isinstance(database, str):
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM events").fetchone()[0])


def _wait_resumed(
    database: Path | str, before: dict[str, int], interrupted: list[str], restart: float, mark: int
) -> tuple[float, int]:
    """Poll the store until every interrupted session wrote a new event; (seconds since `restart`, how many did not).

    On SQLite only the rows after `mark` (the newest row before the restart) are read each time: a
    scan of every session's events (35 ms at 1,000 sessions) every 10 ms took most of one of this
    machine's two CPUs from the server it measures.
    """
    waiting = set(interrupted)
    resumed_at = time.perf_counter() - restart
    with contextlib.ExitStack() as stack:
        conn = None
        if not isinstance(database, str):
            conn = stack.enter_context(contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)))
        while waiting and time.perf_counter() - restart < 120:
            if conn is None:
                counts = _event_counts(database)  # one query reads every session's progress
                waiting = {s for s in waiting if counts.get(s, 0) <= before.get(s, 0)}
            else:
                rows = conn.execute("SELECT rowid, session_id FROM events WHERE rowid > ?", (mark,)).fetchall()
                mark = max([mark, *(row[0] for row in rows)])
                waiting -= {row[1] for row in rows}
            resumed_at = time.perf_counter() - restart
            time.sleep(0.01 if conn is not None else 0.1)
    return resumed_at, len(waiting)


def run(
    sessions: int = 1000, delay_ms: int = 200, save: Path | None = None, world: str = "local", log: Path | None = None
) -> dict[str, float | int]:
    """Interrupt `sessions` turns streamed `delay_ms` a word apart, restart, and time the recovery.

    With `save`, keep the killed app (its store and the bench's notes) there and stop. On the
    Postgres world the store lives in a fresh schema of the test server (`tests/pg.py`).
    """
    slow_turn = f"/delay {delay_ms}\n/reply {_words(sessions)}"
    _compile_eve()
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        root = Path(scratch)
        app = scaffold(root)
        ledger = root / "ledger.ndjson"
        database: Path | str = app / ".eve" / "workflow-data" / "eve.sqlite3"
        args: list[str] = []
        if world == "postgres":
            from tests import pg

            database = pg.schema_url(stack.enter_context(pg.fresh_schema()))
            args = ["--world", "postgres", "--database-url", database]
        server = EveProcess(app, ledger, args=args, log=log, env=BYTECODE)
        client = Client(server, timeout=30.0)
        try:
            started = time.perf_counter()
            server.start()
            baseline = time.perf_counter() - started
            with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
                ops = list(pool.map(lambda n: client.create(f"op-{n}", slow_turn), range(sessions)))
            ids = [op.session for op in ops if op.session is not None]
            assert len(ids) == sessions
            time.sleep(0.5)  # every turn is under way, none can have finished (see _words)
            server.kill()
            before = _event_counts(database)
            last = _last_types(database)
            interrupted = [s for s in ids if last.get(s) != "session.waiting"]
            mark = _last_rowid(database)
            if save is not None:
                shutil.copytree(root, save)
                notes = {"sessions": sessions, "interrupted": interrupted, "before": before}
                (save / "snapshot.json").write_text(json.dumps(notes))
                return {"sessions": sessions, "interrupted": len(interrupted)}
            restart = time.perf_counter()
            server.start()
            listening = time.perf_counter() - restart
            resumed_at, not_resumed = _wait_resumed(database, before, interrupted, restart, mark)
            turn_seconds = len(_words(sessions).split()) * delay_ms / 1000
            for s in ids:
                client.wait_quiet(s, turns=1, timeout=60 + turn_seconds)
            completed = time.perf_counter() - restart
            report = check(client, ids, ledger)
            assert report.violations() == {}, report
        finally:
            server.kill()
    return {
        "sessions": sessions,
        "interrupted": len(interrupted),
        "baseline_start_s": baseline,
        "listening_s": listening,
        "resumed_s": resumed_at,
        "completed_s": completed,
        "not_resumed": not_resumed,
    }


def restart(snapshot: Path, profile: Path | None = None) -> dict[str, float | int]:
    """Restart a fresh copy of a `--save`d snapshot once: listening, all resumed, and CPU seconds by then."""
    notes = json.loads((snapshot / "snapshot.json").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "copy"
        shutil.copytree(snapshot, root)
        command = None if profile is None else [sys.executable, "-c", _PROFILED, str(profile)]
        server = EveProcess(root / "app", root / "ledger.ndjson", command=command, env=BYTECODE)
        database = root / "app" / ".eve" / "workflow-data" / "eve.sqlite3"
        mark = _last_rowid(database)
        try:
            started = time.perf_counter()
            server.start()
            listening = time.perf_counter() - started
            assert server.process is not None
            resumed, not_resumed = _wait_resumed(database, notes["before"], notes["interrupted"], started, mark)
            cpu = _cpu_seconds(server.process.pid)
            if profile is not None:
                server.process.send_signal(signal.SIGUSR1)
                deadline = time.monotonic() + 30
                while not profile.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
                time.sleep(1.0)  # the file is written as it appears
        finally:
            server.kill()
    return {"listening_s": listening, "resumed_s": resumed, "cpu_s": cpu, "not_resumed": not_resumed}


def _restarts(snapshot: Path, rounds: int, profile: Path | None) -> None:
    notes = json.loads((snapshot / "snapshot.json").read_text())
    _compile_eve()
    print(f"restarts of one snapshot: {len(notes['interrupted'])} of {notes['sessions']} sessions interrupted")
    rows = []
    for n in range(rounds):
        figures = restart(snapshot, profile)
        rows.append(figures)
        print(
            f"  round {n + 1}: listening {figures['listening_s']:5.2f} s, all resumed {figures['resumed_s']:5.2f} s "
            f"(CPU {figures['cpu_s']:5.2f} s), not resumed {figures['not_resumed']}",
            flush=True,
        )
    for key in ("listening_s", "resumed_s", "cpu_s"):
        print(f"  median {key}: {statistics.median(r[key] for r in rows):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="?", type=int, default=1000)
    parser.add_argument("--save", type=Path, help="keep the killed app in this (new) folder and stop")
    parser.add_argument("--restart", type=Path, help="restart copies of a saved snapshot")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--delay-ms", type=int, default=200, help="between streamed words (--save 5000: nothing streams while resuming)"
    )
    parser.add_argument("--world", choices=["local", "postgres"], default="local")
    parser.add_argument("--log", type=Path, help="append the servers' logs (stderr) to this file")
    parser.add_argument("--profile", type=Path, help="with --restart: write a cProfile of the restarted server here")
    options = parser.parse_args()
    if options.restart is not None:
        _restarts(options.restart, options.rounds, options.profile)
        return
    sessions = options.sessions
    if options.save is not None:
        saved = run(sessions, options.delay_ms, save=options.save)
        print(f"saved {saved['interrupted']} of {sessions} interrupted sessions in {options.save}")
        return
    figures = run(sessions, options.delay_ms, world=options.world, log=options.log)
    resumed = figures["resumed_s"]
    ok = figures["not_resumed"] == 0 and resumed <= TARGET_SECONDS
    print(
        f"recovery after kill -9 ({options.world} world), {figures['interrupted']} of {sessions} sessions "
        "interrupted mid-turn"
    )
    print(f"  start with no sessions (baseline)   {figures['baseline_start_s']:6.2f} s")
    print(f"  restart to listening                {figures['listening_s']:6.2f} s")
    print(
        f"  restart to all resumed              {resumed:6.2f} s  "
        f"({resumed / figures['baseline_start_s']:.1f}x baseline; target under {TARGET_SECONDS:.0f} s: "
        f"{'ok' if ok else 'OVER TARGET'})"
    )
    print(f"  restart to all turns completed      {figures['completed_s']:6.2f} s")


if __name__ == "__main__":
    main()
