"""Shared helpers of the engine benchmarks: a scratch local world, turn completion, statistics, printing.

A *local world* here is the default template app (on the offline `test` model) compiled from a
scratch copy, a [`SqliteStore`][eve_runtime.store.sqlite.SqliteStore] in a scratch directory under
the repository's `.eve/bench/` (on the real disk, like a user's `.eve/workflow-data`, rather than a
tmpfs `/tmp`), and a started `Runtime`. Everything is removed on exit.

Turn completion is observed at the source: `WatchedStore` is a `SqliteStore` that counts, per
session, the acknowledged (durable) commits carrying a turn boundary event (`session.waiting`,
`session.completed`, `session.failed`), so a benchmark waits for exactly the moment a client could
first read the boundary, without polling the event log.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from eve_runtime.models.base import Model
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.runtime import Runtime, RuntimeOptions
from eve_runtime.store.base import Commit
from eve_runtime.store.sqlite import SqliteStore

__all__ = [
    "BOUNDARIES",
    "FAILURES",
    "REPO_ROOT",
    "SESSION_TASK_PREFIXES",
    "LocalWorld",
    "RawCommit",
    "WatchedStore",
    "compile_template",
    "local_world",
    "median",
    "percentile",
    "rss_bytes",
    "scaffold_app",
    "scratch_dir",
    "session_tasks",
    "verdict",
    "wait_parked",
]

REPO_ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = REPO_ROOT / "templates" / "default"
BENCH_DATA = REPO_ROOT / ".eve" / "bench"
"""Scratch space on the repository's disk (`.eve/` is git-ignored)."""

BOUNDARIES = frozenset({"session.waiting", "session.completed", "session.failed"})
FAILURES = frozenset({"turn.failed", "session.failed"})
"""Events that say a turn did not do its work (a failed turn still ends with `session.waiting`)."""
SESSION_TASK_PREFIXES = ("eve-session-", "eve-turn-", "eve-flush-", "eve-hooks-")
"""Names of the tasks the engine creates per session (actor, turn runner, event flusher, hook dispatch)."""

TOOL_TURN = '/call get_weather {"city":"Paris"}'
"""A `test`-model message that calls the template's tool in step 0 and answers in step 1."""


# -- scratch space and the app -------------------------------------------------------------------


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A fresh directory under `.eve/bench/`, removed (with `.eve/bench/` when empty) on exit."""
    for attempt in range(3):
        BENCH_DATA.mkdir(parents=True, exist_ok=True)
        try:
            path = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=BENCH_DATA))
            break
        except FileNotFoundError:  # a concurrent benchmark removed the emptied parent just now
            if attempt == 2:
                raise
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        try:
            BENCH_DATA.rmdir()
        except OSError:
            pass  # another benchmark's scratch directory is still there


def scaffold_app(root: Path) -> Path:
    """Copy `templates/default` to `root/app` on the `test` model; the app folder."""
    app = root / "app"
    shutil.copytree(TEMPLATE, app)
    replacements = {"{{model}}": "test", "{{name}}": "bench-app", "{{eve_version}}": "0"}
    for path in app.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        for placeholder, value in replacements.items():
            text = text.replace(placeholder, value)
        path.write_text(text, encoding="utf-8")
    return app


def compile_template(root: Path, agent_source: str | None = None) -> CompiledApp:
    """Scaffold and compile the template app under `root` (the caller releases its loader).

    `agent_source` replaces the template's `agent/agent.py` (to configure the agent differently).
    """
    folder = scaffold_app(root)
    if agent_source is not None:
        (folder / "agent" / "agent.py").write_text(agent_source, encoding="utf-8")
    app = compile_app(folder, write=False)
    if app.root is None:
        problems = "; ".join(d.message for d in app.diagnostics)
        raise RuntimeError(f"the template app did not compile: {problems}")
    return app


# -- the store, watched ---------------------------------------------------------------------------


class WatchedStore(SqliteStore):
    """A `SqliteStore` that lets a benchmark await turn boundaries once they are durable."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.boundaries: dict[str, int] = {}
        """Durable boundary events per session, counted since the store opened."""
        self.failures = 0
        """Durable `turn.failed` / `session.failed` events, over all sessions (a benchmark expects none)."""
        self._bench_waiters: dict[str, list[tuple[int, asyncio.Future[None]]]] = {}

    async def commit(self, session_id: str, commit: Commit) -> None:
        await super().commit(session_id, commit)
        self.failures += sum(1 for row in commit.events if row.type in FAILURES)
        added = sum(1 for row in commit.events if row.type in BOUNDARIES)
        if not added:
            return
        count = self.boundaries.get(session_id, 0) + added
        self.boundaries[session_id] = count
        waiting = self._bench_waiters.get(session_id)
        if waiting:
            keep = []
            for target, future in waiting:
                if count >= target:
                    if not future.done():
                        future.set_result(None)
                else:
                    keep.append((target, future))
            if keep:
                self._bench_waiters[session_id] = keep
            else:
                del self._bench_waiters[session_id]

    async def wait_boundaries(self, session_id: str, count: int, timeout: float = 30.0) -> None:
        """Wait until the session has `count` durable boundary events (since the store opened).

        Raises:
            TimeoutError: They did not all arrive within `timeout` seconds.
        """
        if self.boundaries.get(session_id, 0) >= count:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._bench_waiters.setdefault(session_id, []).append((count, future))
        await asyncio.wait_for(future, timeout)

    def forget(self) -> None:
        """Drop the bookkeeping (before measuring memory, so the benchmark's own dicts do not count)."""
        self.boundaries = {}
        self._bench_waiters = {}


@dataclass
class LocalWorld:
    """A started runtime of the template app over a `WatchedStore` in a scratch directory."""

    directory: Path
    app: CompiledApp
    store: WatchedStore
    runtime: Runtime
    turns: dict[str, int] = field(default_factory=dict)
    """Turn boundaries awaited so far, per session."""

    @property
    def agent(self) -> RuntimeAgent:
        assert self.app.root is not None
        return self.app.root

    async def create(self, message: str | None = None) -> str:
        """Create a session (with its first message when given); its id."""
        session = await self.runtime.create_session(message=None if message is None else {"message": message})
        self.turns[session.id] = 0
        return session.id

    async def start_turn(self, session_id: str, message: str) -> None:
        """Deliver a message to a parked session (its turn then runs in the background)."""
        await self.runtime.deliver(session_id, "message", {"message": message})

    async def wait_turn(self, session_id: str, timeout: float = 30.0) -> None:
        """Wait for the session's next turn boundary to be durable."""
        self.turns[session_id] = self.turns.get(session_id, 0) + 1
        await self.store.wait_boundaries(session_id, self.turns[session_id], timeout)

    async def turn(self, session_id: str, message: str, timeout: float = 30.0) -> None:
        """Send a message and wait until its turn ended durably (`session.waiting`)."""
        await self.start_turn(session_id, message)
        await self.wait_turn(session_id, timeout)

    async def settle(self) -> None:
        """Forget the benchmark's own bookkeeping and let the store writer drop its last group.

        The writer thread keeps the jobs of its last transaction (their commits, event lines)
        referenced until the next one; one empty write replaces them, so a heap measurement
        sees only what the engine keeps per session.
        """
        self.turns = {}
        self.store.forget()
        await self.store.pragmas()
        gc.collect()


@asynccontextmanager
async def local_world(
    prefix: str,
    *,
    models: dict[str, Model] | None = None,
    options: RuntimeOptions | None = None,
    agent_source: str | None = None,
) -> AsyncIterator[LocalWorld]:
    """A scratch local world (see the module docstring), torn down and deleted on exit."""
    with scratch_dir(prefix) as directory:
        app = compile_template(directory, agent_source)
        try:
            store = WatchedStore(directory / "workflow-data")
            await store.open()
            try:
                assert app.root is not None
                runtime = Runtime(app.root, store, options=options, models=models)
                await runtime.start()
                try:
                    yield LocalWorld(directory=directory, app=app, store=store, runtime=runtime)
                finally:
                    await runtime.stop(deadline=5.0)
            finally:
                await store.close()
        finally:
            app.loader.release()


def session_tasks() -> list[str]:
    """Names of the live asyncio tasks the engine creates per session (see `SESSION_TASK_PREFIXES`)."""
    names = [task.get_name() for task in asyncio.all_tasks()]
    return [name for name in names if name.startswith(SESSION_TASK_PREFIXES)]


async def wait_parked(timeout: float = 10.0) -> list[str]:
    """Wait until no per-session task is alive (actors end just after their last commit).

    Returns the per-session tasks still alive when `timeout` passed (empty when all parked).
    """
    deadline = time.perf_counter() + timeout
    while True:
        alive = session_tasks()
        if not alive or time.perf_counter() >= deadline:
            return alive
        await asyncio.sleep(0.001)


# -- the baseline: one raw commit -----------------------------------------------------------------


class RawCommit:
    """A plain sqlite3 connection with the store's pragmas (WAL, `synchronous=FULL`) on the same disk."""

    def __init__(self, directory: Path) -> None:
        self.conn = sqlite3.connect(directory / "raw.sqlite3", isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
        self._value = "x" * 200

    def sample(self) -> float:
        """Seconds for one small insert in its own durable transaction."""
        started = time.perf_counter()
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO rows (value) VALUES (?)", (self._value,))
        self.conn.execute("COMMIT")
        return time.perf_counter() - started

    def close(self) -> None:
        self.conn.close()


# -- statistics and printing ---------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linearly interpolated between the nearest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def rss_bytes() -> int:
    """The process's resident set size (Linux `/proc/self/statm`), after a full collection."""
    gc.collect()
    with open("/proc/self/statm", encoding="ascii") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER TARGET"
