"""A runtime over a store, with helpers to drive sessions and read their events.

`make_harness` opens a store of the kind the `harness_store` fixture (tests/conftest.py) chose for
the running test: tests/engine, tests/tasks and tests/sessions run every test once on a memory
store and once on an SQLite store. Outside those folders it opens a memory store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from eve_runtime.models.base import Model
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.sessions.runtime import Runtime, RuntimeOptions
from eve_runtime.store.base import Store
from eve_runtime.store.memory import MemoryStore
from eve_runtime.store.sqlite import SqliteStore
from tests.helpers import write_app

WEATHER_TOOL = '''
def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {"city": city, "condition": "Sunny", "temperatureF": 72}
'''

BASE_FILES: Mapping[str, str] = {
    "agent/agent.py": 'from eve_runtime import define_agent\n\nagent = define_agent(model="test")\n',
    "agent/instructions.md": "You are a test agent.\n",
    "agent/tools/get_weather.py": WEATHER_TOOL,
}

Event = dict[str, Any]
BOUNDARIES = ("session.waiting", "session.completed", "session.failed")


StoreKind = Literal["memory", "sqlite"]
STORE_KINDS: tuple[StoreKind, ...] = ("memory", "sqlite")


@dataclass
class Stores:
    """The kind of store `open_store` opens, and the SQLite stores it opened (closed at teardown)."""

    kind: StoreKind = "memory"
    opened: list[Store] = field(default_factory=list)

    async def close(self) -> None:
        while self.opened:
            await self.opened.pop().close()


STORES = Stores()


async def open_store(tmp_path: Path) -> Store:
    """A new, empty, open store of the running test's kind (an SQLite one in a new folder of `tmp_path`)."""
    store: Store
    if STORES.kind == "sqlite":
        store = SqliteStore(tmp_path / f"harness-store-{len(STORES.opened)}")
        STORES.opened.append(store)
    else:
        store = MemoryStore()
    await store.open()
    return store


# A runtime bug SQLite shows and memory hides: `SessionActor.commit(replace_history=True)` first flushes
# the events emitted before it (`session.waiting` included) in a transaction of their own, so a reader
# woken by them can load the old history, and a process that dies in between keeps the old history while
# its log reports the clear or compaction (test_compacting_twice_folds_the_previous_summary_in shows it).
def fast_options(**overrides: Any) -> RuntimeOptions:
    return RuntimeOptions(provider_backoff=0, step_retry_delay=0, **overrides)


@dataclass
class Harness:
    """One runtime; `restart()` builds a new one on the same store (a process restart)."""

    app: CompiledApp
    store: Store
    models: dict[str, Model] = field(default_factory=dict)
    options: RuntimeOptions = field(default_factory=fast_options)
    runtime: Runtime | None = None

    async def start(self) -> Runtime:
        assert self.app.root is not None, [d.message for d in self.app.diagnostics]
        self.runtime = Runtime(self.app.root, self.store, options=self.options, models=dict(self.models))
        await self.runtime.start()
        return self.runtime

    @property
    def rt(self) -> Runtime:
        assert self.runtime is not None
        return self.runtime

    async def crash(self) -> None:
        """Stop every actor abruptly, as a kill would: nothing finishes, nothing is cleaned up."""
        await self.rt.abort()
        self.runtime = None

    async def restart(self) -> Runtime:
        if self.runtime is not None:
            await self.crash()
        return await self.start()

    async def stop(self) -> None:
        if self.runtime is not None:
            await self.runtime.stop(deadline=2)
            self.runtime = None

    async def create(self, message: str | None = None, **fields: Any) -> str:
        payload = None if message is None else {"message": message, **fields}
        session = await self.rt.create_session(message=payload)
        return session.id

    async def send(self, session_id: str, message: str, **fields: Any) -> str:
        delivery = await self.rt.deliver(session_id, "message", {"message": message, **fields})
        return delivery.id

    async def events(self, session_id: str, start: int = 0) -> list[Event]:
        return [json.loads(row.line) for row in await self.store.read_events(session_id, start)]

    async def wait_for(
        self, session_id: str, until: Callable[[list[Event]], bool], timeout: float = 5.0
    ) -> list[Event]:
        """Wait until the session's events satisfy `until`; fail with the events seen on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        known = 0
        while True:
            events = await self.events(session_id)
            if until(events):
                return events
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"timed out; events: {types(events)}")
            known = len(events)
            await self.store.wait_for_events(session_id, known, min(remaining, 0.5))

    async def turns(self, session_id: str, count: int, timeout: float = 5.0) -> list[Event]:
        """Wait for `count` turn boundaries (session.waiting/completed/failed)."""
        return await self.wait_for(
            session_id, lambda events: sum(e["type"] in BOUNDARIES for e in events) >= count, timeout
        )


def types(events: list[Event]) -> list[str]:
    return [e["type"] for e in events]


def of_type(events: list[Event], event_type: str) -> list[Event]:
    return [e for e in events if e["type"] == event_type]


def last_reply(events: list[Event]) -> str:
    replies = [e for e in events if e["type"] == "message.completed" and e["data"]["finishReason"] != "tool-calls"]
    return str(replies[-1]["data"]["message"])


async def make_harness(
    tmp_path: Path,
    files: Mapping[str, str] | None = None,
    *,
    models: dict[str, Model] | None = None,
    options: RuntimeOptions | None = None,
    store: Store | None = None,
) -> Harness:
    app_root = write_app(tmp_path, {**BASE_FILES, **(files or {})})
    app = compile_app(app_root, write=False)
    if store is None:
        store = await open_store(tmp_path)
    harness = Harness(app=app, store=store, models=models or {}, options=options or fast_options())
    await harness.start()
    return harness
