"""Helpers for the HTTP server tests: a scaffolded app, an in-process client, and a live uvicorn server."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from starlette.applications import Starlette
from starlette.testclient import TestClient

from eve_cli._templates import render_template
from eve_runtime import __version__
from eve_runtime.models.base import Model
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.app import create_app
from eve_runtime.server.auth import Authenticator, LoopbackAuth
from eve_runtime.server.stream import StreamOptions
from eve_runtime.serving.http_limits import HttpLimits
from eve_runtime.serving.serve import run_app
from eve_runtime.sessions.runtime import Runtime, RuntimeOptions
from eve_runtime.store.base import Store
from eve_runtime.store.memory import MemoryStore

__all__ = [
    "FAST",
    "Harness",
    "LiveServer",
    "harness",
    "parse_ndjson",
    "scaffold_app",
]

T = TypeVar("T")
Mode = Literal["development", "production"]
FAST = RuntimeOptions(provider_backoff=0, step_retry_delay=0)
WEATHER_CALL = '/call get_weather {"city":"Paris"}'


def scaffold_app(target: Path) -> Path:
    """The default template with the offline test model, as `eve init --model test` writes it."""
    render_template("default", target, {"model": "test", "name": "weather-agent", "eve_version": __version__})
    return target


def parse_ndjson(body: bytes) -> list[dict[str, Any]]:
    """The events of a stream body (blank lines and `$eve` transport records skipped)."""
    events = []
    for line in body.split(b"\n"):
        if line.strip():
            value = json.loads(line)
            if "$eve" not in value:
                events.append(value)
    return events


@dataclass
class Harness:
    """An app on a started runtime, served in process through starlette's TestClient."""

    client: TestClient
    runtime: Runtime
    store: Store
    app: Starlette

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run a coroutine function on the app's event loop."""
        assert self.client.portal is not None
        return self.client.portal.call(fn, *args)

    def create(self, message: str | list[dict[str, Any]] | None = None, **fields: Any) -> str:
        body = {**({"message": message} if message is not None else {}), **fields}
        response = self.client.post("/eve/v1/session", json=body)
        assert response.status_code == 202, response.text
        return str(response.json()["sessionId"])

    def events(self, session_id: str, query: str = "") -> list[dict[str, Any]]:
        response = self.client.get(f"/eve/v1/session/{session_id}/stream?follow=false{query}")
        assert response.status_code == 200, response.text
        return parse_ndjson(response.content)

    def wait_for(
        self, session_id: str, event_type: str, *, count: int = 1, timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """Wait (on the store, no sleeping) until `count` events of this type exist; all events then."""
        known = 0
        deadline = self.call(_now) + timeout
        while True:
            events = self.events(session_id)
            if sum(1 for e in events if e["type"] == event_type) >= count:
                return events
            known = len(events)
            remaining = deadline - self.call(_now)
            assert remaining > 0, f"no {event_type} after {timeout}s: {[e['type'] for e in events]}"
            self.call(self.store.wait_for_events, session_id, known, remaining)


async def _now() -> float:
    return asyncio.get_running_loop().time()


@contextmanager
def harness(
    agent: RuntimeAgent,
    manifest: Manifest,
    *,
    mode: Mode = "development",
    auth: Authenticator | None = None,
    store: Store | None = None,
    client: tuple[str, int] = ("testclient", 50000),
    base_url: str = "http://testserver",
    models: dict[str, Model] | None = None,
    options: RuntimeOptions | None = None,
    **app_options: Any,
) -> Iterator[Harness]:
    """A [`Harness`][tests.server.support.Harness]; the store is opened and closed here.

    `models` stands in for the app's models by id (a FunctionModel under `test`); `options`
    replaces the fast defaults (`FAST`).
    """
    store = store if store is not None else MemoryStore()
    runtime = Runtime(agent, store, options=options or FAST, mode=mode, models=models)
    app = create_app(runtime, manifest, mode=mode, auth=auth or LoopbackAuth(allow_test_client=True), **app_options)
    with TestClient(app, client=client, base_url=base_url) as test_client:
        h = Harness(test_client, runtime, store, app)
        h.call(store.open)
        h.call(runtime.start)
        try:
            yield h
        finally:
            h.call(runtime.stop, 2.0)
            h.call(store.close)


@dataclass
class LiveServer:
    """The app served by a real uvicorn on 127.0.0.1:<free port>, in a background thread."""

    agent: RuntimeAgent
    manifest: Manifest
    mode: Mode = "development"
    auth: Authenticator | None = None
    stream_options: StreamOptions | None = None
    store: Store = field(default_factory=MemoryStore)
    limits: HttpLimits | None = None
    models: dict[str, Model] | None = None
    """Stand-ins for the app's models by id (a FunctionModel under `test`)."""
    port: int = 0
    app: Starlette | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None
    _thread: threading.Thread | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self._thread = threading.Thread(target=self._run, name="eve-test-server", daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "the server did not start"
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        """Ask the server to shut down (as SIGTERM does); `__exit__` waits for it."""
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)

    def __exit__(self, *exc: object) -> None:
        assert self._thread is not None
        self.stop()
        self._thread.join(15)
        assert not self._thread.is_alive(), "the server did not stop"
        if self._error is not None:
            raise self._error

    def call(self, fn: Callable[..., Coroutine[Any, Any, T]], *args: Any, timeout: float = 10.0) -> T:
        """Run a coroutine function on the server's loop."""
        assert self._loop is not None
        future: Future[T] = asyncio.run_coroutine_threadsafe(fn(*args), self._loop)
        return future.result(timeout)

    def task_count(self) -> int:
        """How many asyncio tasks the server's loop has (the caller's query task excluded)."""

        async def count() -> int:
            return len(asyncio.all_tasks()) - 1

        return self.call(count)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to the test thread
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        await self.store.open()
        runtime = Runtime(self.agent, self.store, options=FAST, mode=self.mode, models=self.models)
        await runtime.start()
        auth = self.auth or LoopbackAuth()
        self.app = create_app(runtime, self.manifest, mode=self.mode, auth=auth, stream_options=self.stream_options)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))

        def listening(port: int) -> None:
            self.port = port
            runtime.connections.listening_at(self.url)
            self._ready.set()

        try:
            await run_app(
                self.app,
                sock,
                on_listening=listening,
                stop=self._stop,
                handle_signals=False,
                graceful_timeout=2,
                limits=self.limits,
            )
        finally:
            await runtime.stop(2.0)
            await self.store.close()
