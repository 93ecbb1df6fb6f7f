"""eve beside its peers, one workload, one run: LangGraph and DBOS on SQLite and on Postgres.

Each framework runs in its own worker process (`eve_worker.py` in the repository's `.venv`;
`langgraph_worker.py` and `dbos_worker.py` in `.venv-peers`, which `make bench-peers` builds with
pinned versions), all doing the same turn: a fake model asks for the trivial tool `get_weather`,
the tool answers, the fake model answers in one sentence (model -> tool -> model), on one
thread/session per worker. The stores: SQLite in WAL mode with `synchronous=FULL` (eve's local
world, LangGraph's `SqliteSaver`, DBOS's SQLite system database), and Postgres at
`EVE_BENCH_DATABASE_URL` (default `postgresql://postgres@127.0.0.1:5432/test`), one schema per
worker, skipped with a message when unreachable.

Printed:

1. Time per turn and per model call (a turn makes two), median and p90 over interleaved rounds:
   every round runs `turns` turns in each worker, in a shuffled order, beside the baseline of the
   same store measured by this process in the same round (one small INSERT in its own durable
   transaction); each figure also as a ratio to that raw commit and to eve on the same store.
2. Store size after `size_turns` turns on one fresh thread/session (SQLite: the database files
   after a clean close; Postgres: `pg_total_relation_size` of the schema's tables).
3. Recovery after a crash: a worker is killed (SIGKILL) while its turn's second model call runs;
   a new worker over the same store is started, and the time from its spawn to its first call
   into the fake model (the resumed turn's next event) and to the turn's end is printed (median
   of `crash_runs`), imports included, as a user restarting the process pays them.

Run: `make bench-peers`, or `.venv/bin/python bench/peers/run.py --help` for the sizes and choices.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._common import REPO_ROOT, RawCommit, median, percentile, scratch_dir
from bench.postgres import database_url, unreachable as postgres_unreachable

HERE = Path(__file__).resolve().parent
PEERS_PYTHON = REPO_ROOT / ".venv-peers" / "bin" / "python"
PEERS = {"eve": "eve_worker.py", "langgraph": "langgraph_worker.py", "dbos": "dbos_worker.py"}
NAMES = {"eve": "eve", "langgraph": "LangGraph", "dbos": "DBOS"}
STORES = {"sqlite": "SQLite", "postgres": "Postgres"}


class Worker:
    """One framework's worker process, spoken to through `_protocol.py`'s line protocol."""

    def __init__(self, peer: str, backend: str, directory: Path, schema: str, resume: bool = False) -> None:
        python = sys.executable if peer == "eve" else str(PEERS_PYTHON)
        command = [python, str(HERE / PEERS[peer]), "--backend", backend, "--dir", str(directory)]
        if backend == "postgres":
            command += ["--url", database_url(), "--schema", schema]
        if resume:
            command.append("--resume")
        self.peer = peer
        self.spawned = time.time()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO_ROOT
        )

    def read(self, key: str) -> Any:
        """The next protocol answer carrying `key` (a framework's own log lines on stdout are skipped)."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                message = json.loads(line)
                if "error" in message:
                    raise RuntimeError(f"{self.peer} worker: {message['error']}")
                if key in message:
                    return message
        raise RuntimeError(f"the {self.peer} worker exited (code {self.process.wait()}) before answering {key!r}")

    def send(self, op: str, **fields: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()

    def turns(self, count: int) -> list[float]:
        self.send("turns", n=count)
        return [float(value) for value in self.read("turn_s")["turn_s"]]

    def quit(self) -> None:
        self.send("quit")
        self.read("closed")
        self.process.wait(30)

    def kill(self) -> None:
        """Kill the process (SIGKILL) unless it has exited, and close its pipes."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except BrokenPipeError:
                    pass  # it died with input unread


class RawPostgres:
    """One small INSERT in its own transaction (autocommit) on a plain psycopg connection."""

    def __init__(self, schema: str) -> None:
        import psycopg

        self.conn = psycopg.connect(database_url(), autocommit=True)
        self.conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        self.conn.execute(f'CREATE TABLE "{schema}".raw_rows (id BIGSERIAL PRIMARY KEY, value TEXT NOT NULL)')
        self.insert = f'INSERT INTO "{schema}".raw_rows (value) VALUES (%s)'

    def sample(self) -> float:
        started = time.perf_counter()
        self.conn.execute(self.insert, ("x" * 200,))
        return time.perf_counter() - started

    def close(self) -> None:
        self.conn.close()


@contextmanager
def schemas() -> Iterator[list[str]]:
    """Schema names handed out during the run; every one is dropped at the end."""
    made: list[str] = []
    try:
        yield made
    finally:
        if made:
            import psycopg

            with psycopg.connect(database_url(), autocommit=True) as conn:
                for name in made:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@dataclass
class Place:
    """Where one worker keeps its store."""

    directory: Path
    schema: str


class Run:
    def __init__(self, root: Path, made: list[str]) -> None:
        self.root = root
        self.made = made

    def place(self, peer: str, backend: str, purpose: str) -> Place:
        name = f"{peer}-{backend}-{purpose}-{uuid.uuid4().hex[:6]}"
        schema = f"bench_peers_{peer}_{uuid.uuid4().hex[:8]}"
        if backend == "postgres":
            self.made.append(schema)
        return Place(self.root / name, schema)

    def worker(self, peer: str, backend: str, place: Place, resume: bool = False) -> Worker:
        worker = Worker(peer, backend, place.directory, place.schema, resume)
        if not resume:
            worker.read("ready")
        return worker


def measure_turns(run: Run, peers: Sequence[str], backends: Sequence[str], rounds: int, turns: int) -> dict[str, Any]:
    workers = {(p, b): run.worker(p, b, run.place(p, b, "turns")) for b in backends for p in peers}
    raw: dict[str, Any] = {"sqlite": RawCommit(run.root)}
    if "postgres" in backends:
        schema = f"bench_peers_raw_{uuid.uuid4().hex[:8]}"
        run.made.append(schema)
        raw["postgres"] = RawPostgres(schema)
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in workers}
    raw_samples: dict[str, list[float]] = {backend: [] for backend in backends}
    shuffle = random.Random(18)
    try:
        for index in range(rounds + 1):  # round 0 warms up
            order = list(workers)
            shuffle.shuffle(order)
            for key in order:
                times = workers[key].turns(turns)
                commits = [raw[key[1]].sample() for _ in range(turns)]
                if index:
                    samples[key].extend(times)
                    raw_samples[key[1]].extend(commits)
        for worker in workers.values():
            worker.quit()
    finally:
        for worker in workers.values():
            worker.kill()
        for baseline in raw.values():
            baseline.close()
    return {"turns": {f"{p}/{b}": v for (p, b), v in samples.items()}, "raw": raw_samples}


def store_bytes(backend: str, place: Place) -> int:
    if backend == "sqlite":
        return sum(path.stat().st_size for path in place.directory.rglob("*.sqlite3*") if path.is_file())
    import psycopg

    query = (
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'm')"
    )
    with psycopg.connect(database_url()) as conn:
        row = conn.execute(query, (place.schema,)).fetchone()
    return int(row[0]) if row else 0


def measure_size(run: Run, peers: Sequence[str], backends: Sequence[str], size_turns: int) -> dict[str, int]:
    sizes = {}
    for backend in backends:
        for peer in peers:
            place = run.place(peer, backend, "size")
            worker = run.worker(peer, backend, place)
            try:
                left = size_turns
                while left:
                    left -= len(worker.turns(min(100, left)))
                worker.quit()
            finally:
                worker.kill()
            sizes[f"{peer}/{backend}"] = store_bytes(backend, place)
    return sizes


def measure_crash(run: Run, peers: Sequence[str], backends: Sequence[str], runs: int) -> dict[str, dict[str, float]]:
    figures = {}
    for backend in backends:
        for peer in peers:
            first, done = [], []
            for _ in range(runs):
                place = run.place(peer, backend, "crash")
                worker = run.worker(peer, backend, place)
                try:
                    worker.turns(1)  # the session exists and has a finished turn
                    worker.send("crash_turn")
                    worker.read("blocked")
                    time.sleep(0.1)  # what the framework writes before the call has landed
                finally:
                    worker.kill()
                resumed = run.worker(peer, backend, place, resume=True)
                try:
                    answer = resumed.read("done")
                    resumed.process.wait(60)
                finally:
                    resumed.kill()
                first.append(float(answer["first_event"]) - resumed.spawned)
                done.append(float(answer["done"]) - resumed.spawned)
            figures[f"{peer}/{backend}"] = {"first_event_s": median(first), "done_s": median(done)}
    return figures


def run(
    rounds: int = 20,
    turns: int = 10,
    size_turns: int = 500,
    crash_runs: int = 3,
    peers: Sequence[str] = tuple(PEERS),
    backends: Sequence[str] = tuple(STORES),
) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    notes = []
    if any(peer != "eve" for peer in peers) and not PEERS_PYTHON.exists():
        raise SystemExit(f"{PEERS_PYTHON} is missing: run `make bench-peers` (it builds .venv-peers first)")
    if "postgres" in backends:
        reason = postgres_unreachable()
        if reason is not None:
            notes.append(f"Postgres skipped: {reason}")
            backends = [b for b in backends if b != "postgres"]
    with scratch_dir("peers") as root, schemas() as made:
        where = Run(root, made)
        started = time.perf_counter()
        figures = measure_turns(where, peers, backends, rounds, turns)
        figures["sizes"] = measure_size(where, peers, backends, size_turns) if size_turns else {}
        figures["crash"] = measure_crash(where, peers, backends, crash_runs) if crash_runs else {}
        figures["seconds"] = time.perf_counter() - started
    figures.update(
        rounds=rounds,
        turns_per_round=turns,
        size_turns=size_turns,
        crash_runs=crash_runs,
        peers=list(peers),
        backends=list(backends),
        notes=notes,
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        machine=f"{os.cpu_count()} CPUs ({platform.machine()}, {platform.system()} {platform.release()}), shared",
        versions=versions(peers),
    )
    return figures


def versions(peers: Sequence[str]) -> dict[str, str]:
    from importlib.metadata import version

    found = {"eve": version("eve-framework")}
    wanted = [name for peer, name in (("langgraph", "langgraph"), ("dbos", "dbos")) if peer in peers]
    if wanted:
        script = "import sys, importlib.metadata as m; print(' '.join(m.version(n) for n in sys.argv[1:]))"
        output = subprocess.run([str(PEERS_PYTHON), "-c", script, *wanted], capture_output=True, text=True, check=True)
        found.update(zip(wanted, output.stdout.split(), strict=True))
    return found


def _ms(value: float) -> str:
    return f"{value * 1000:8.3f} ms"


def report(figures: dict[str, Any]) -> None:
    versions = ", ".join(f"{NAMES[k]} {v}" for k, v in figures["versions"].items())
    print(f"eve beside its peers: {figures['date']}, {figures['machine']}; {versions}")
    print(
        f"one turn = fake model -> trivial tool -> fake model; {figures['rounds']} interleaved rounds of "
        f"{figures['turns_per_round']} turns per framework (after one warm-up round)"
    )
    for note in figures["notes"]:
        print(f"  {note}")
    header = f"  {'store':<9} {'framework':<22} {'turn median':>12} {'turn p90':>11} {'per model call':>14}"
    print(header + f" {'vs raw commit':>13} {'vs eve':>7}")
    for backend in figures["backends"]:
        raw = figures["raw"][backend]
        base = median(raw)
        label = f"raw {'commit' if backend == 'sqlite' else 'INSERT'}"
        print(f"  {STORES[backend]:<9} {label:<22} {_ms(base):>12} {_ms(percentile(raw, 90)):>11} {'':>14} {1:12.1f}x")
        ours = figures["turns"].get(f"eve/{backend}")
        for peer in figures["peers"]:
            times = figures["turns"][f"{peer}/{backend}"]
            turn = median(times)
            versus = f"{turn / median(ours):6.2f}x" if ours else ""
            print(
                f"  {STORES[backend]:<9} {NAMES[peer]:<22} {_ms(turn):>12} {_ms(percentile(times, 90)):>11} "
                f"{_ms(turn / 2):>14} {turn / base:12.1f}x {versus:>7}"
            )
    if figures["sizes"]:
        print(f"store size after {figures['size_turns']} turns on one thread/session:")
        for key, size in figures["sizes"].items():
            peer, backend = key.split("/")
            ours = figures["sizes"].get(f"eve/{backend}")
            versus = f"  ({size / ours:.2f}x eve)" if ours else ""
            per_turn = size / figures["size_turns"]
            print(f"  {STORES[backend]:<9} {NAMES[peer]:<10} {size / 1024:10.0f} KiB  {per_turn:8.0f} B/turn{versus}")
    if figures["crash"]:
        print(
            f"after kill -9 mid-turn, from the new process's spawn (median of {figures['crash_runs']}, imports "
            "included):"
        )
        print(f"  {'store':<9} {'framework':<10} {'first model call':>17} {'turn done':>12}")
        for key, crash in figures["crash"].items():
            peer, backend = key.split("/")
            print(
                f"  {STORES[backend]:<9} {NAMES[peer]:<10} {_ms(crash['first_event_s']):>17} {_ms(crash['done_s']):>12}"
            )
    print(f"(the run took {figures['seconds']:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--size-turns", type=int, default=500)
    parser.add_argument("--crash-runs", type=int, default=3)
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--backends", default=",".join(STORES))
    args = parser.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    backends = [b for b in args.backends.split(",") if b]
    for name, allowed in ((peers, PEERS), (backends, STORES)):
        unknown = [n for n in name if n not in allowed]
        if unknown:
            raise SystemExit(f"unknown {', '.join(unknown)}: choose among {', '.join(allowed)}")
    report(run(args.rounds, args.turns, args.size_turns, args.crash_runs, peers, backends))


if __name__ == "__main__":
    main()
