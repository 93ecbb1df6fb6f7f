"""Serving an app: `eve start` (production) and `eve dev` (development) run [`serve`][eve_runtime.serving.serve.serve].

The order matters: load `.env`, compile (a project with errors never serves), open the store
(one process per local store), bind the port, start the runtime (which recovers every
unfinished session), and only then accept requests and print `eve listening on http://HOST:PORT`.
SIGTERM or SIGINT stops accepting, ends live streams, lets in-flight requests finish, stops the
runtime at step boundaries (within a deadline), closes the store and returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import math
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Literal

import uvicorn
from starlette.applications import Starlette

from eve_runtime.errors import CompileError, UserError
from eve_runtime.models import preload_litellm, uses_litellm
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.info import missing_keys
from eve_runtime.project.paths import load_env_files
from eve_runtime.redaction import REDACTOR, install_log_redaction
from eve_runtime.server.app import create_app
from eve_runtime.server.auth import Authenticator, BearerTokenAuth, LoopbackAuth, is_loopback_host, token_problem
from eve_runtime.server.stream import StreamOptions
from eve_runtime.serving import event_loop, heap
from eve_runtime.serving.broken import BrokenBuild, wait_for_fix
from eve_runtime.serving.companion import Companion, client_host
from eve_runtime.serving.http_limits import HttpLimits, protocol_class
from eve_runtime.serving.reloader import Reloader
from eve_runtime.serving.worlds import WORLDS, WorldUnavailable, lease_seconds, open_world
from eve_runtime.sessions.runtime import Runtime, RuntimeOptions
from eve_runtime.telemetry.server import server_telemetry

__all__ = ["ServeError", "listening_line", "run_app", "serve"]

logger = logging.getLogger("eve.serve")

Mode = Literal["development", "production"]
NO_TOKEN_WARNING = (
    "EVE_AUTH_TOKEN is not set: every route but /eve/v1/health will answer 401. Set EVE_AUTH_TOKEN (in the "
    "environment or the app's .env) and send it as 'Authorization: Bearer <token>'."
)


class ServeError(UserError):
    """The server cannot start: the store is in use, the port is taken, the world is unavailable, ..."""


def listening_line(host: str, port: int) -> str:
    """`eve listening on http://HOST:PORT` (IPv6 hosts in brackets)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"eve listening on http://{shown}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` (not listening yet)."""
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(
            f"Cannot listen on {host!r}: {exc.strerror or exc}. Use an address such as 127.0.0.1."
        ) from None
    family, kind, proto, _canonical, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        hint = " Choose another with --port (0 picks a free one)." if exc.errno == errno.EADDRINUSE else ""
        raise ServeError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.{hint}") from None
    sock.set_inheritable(True)
    return sock


class _Server(uvicorn.Server):
    """uvicorn, minus its signal handling (ours stops streams first), telling us when it accepts."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_started()


async def run_app(
    app: Starlette,
    sock: socket.socket,
    *,
    on_listening: Callable[[int], None],
    stop: asyncio.Event | None = None,
    handle_signals: bool = True,
    graceful_timeout: int = 5,
    limits: HttpLimits | None = None,
) -> None:
    """Serve `app` on a bound socket until SIGTERM/SIGINT (or `stop` is set), then shut down gracefully.

    Args:
        app: An app from [`create_app`][eve_runtime.server.app.create_app].
        sock: A bound socket (`listen` is called here).
        on_listening: Called with the port once the socket accepts requests.
        stop: Set it to stop the server (from the server's event loop).
        handle_signals: Install SIGTERM/SIGINT handlers (main thread only).
        graceful_timeout: Seconds in-flight requests get to finish once stopping.
        limits: Connection deadlines and request-head caps (default: `HttpLimits()`).
    """
    limits = limits or HttpLimits()
    config = uvicorn.Config(
        app,
        http=protocol_class(limits),
        # The protocol closes idle connections itself (on time, also before a first request);
        # uvicorn's own timer, which takes whole seconds, only backs it up.
        timeout_keep_alive=max(1, math.ceil(limits.keep_alive_timeout)),
        h11_max_incomplete_event_size=limits.max_header_bytes,
        log_config=None,
        lifespan="off",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=graceful_timeout,
    )
    port = int(sock.getsockname()[1])
    server = _Server(config, lambda: on_listening(port))
    loop = asyncio.get_running_loop()

    def request_stop() -> None:
        if server.should_exit:
            server.force_exit = True  # a second signal: do not wait for requests any more
        server.should_exit = True
        app.state.streams.close_all()

    signals = (signal.SIGTERM, signal.SIGINT) if handle_signals else ()
    for signum in signals:
        loop.add_signal_handler(signum, request_stop)
    watcher = None
    if stop is not None:
        event = stop

        async def watch() -> None:
            await event.wait()
            request_stop()

        watcher = asyncio.create_task(watch())
    try:
        await server.serve(sockets=[sock])
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
        if watcher is not None:
            watcher.cancel()


def _test_clock(options: RuntimeOptions | None) -> RuntimeOptions | None:
    """The options with the clock `EVE_TEST_CLOCK_OFFSET_SECONDS` shifts (multi-process schedule tests only)."""
    raw = os.environ.get("EVE_TEST_CLOCK_OFFSET_SECONDS", "").strip()
    if not raw:
        return options
    offset = float(raw)
    return dataclasses.replace(options or RuntimeOptions(), clock=lambda: time.time() + offset)


def _auth(mode: Mode, host: str) -> Authenticator:
    if mode == "development":
        if not is_loopback_host(host):
            logger.warning("eve dev listens on %s but answers only requests from this machine", host)
        return LoopbackAuth(bind_host=host)
    token = os.environ.get("EVE_AUTH_TOKEN") or None
    if token is None:
        logger.warning(NO_TOKEN_WARNING)
    if not is_loopback_host(host):
        logger.warning("eve start listens on %s: other machines can reach it", host)
    return BearerTokenAuth(token)


async def _serve(
    compiled: CompiledApp,
    *,
    reload: bool,
    dormant_before: float | None,
    mode: Mode,
    host: str,
    port: int,
    world: str,
    database_url: str | None,
    runtime_options: RuntimeOptions | None,
    stream_options: StreamOptions | None,
    stop_deadline: float,
    on_listening: Callable[[str], None],
    companion: Callable[[str], Awaitable[None]] | None,
    limits: HttpLimits,
    inspector: bool,
) -> None:
    if compiled.root is not None and uses_litellm(agent.config.model for agent in compiled.root.walk()):
        preload_litellm()  # while the store opens and sessions recover, so the first turn does not pay for it
    try:
        if world == "postgres":  # many processes share the store: sessions run under leases
            runtime_options = dataclasses.replace(runtime_options or RuntimeOptions(), lease_seconds=lease_seconds())
        store = await open_world(world, database_url, compiled.paths.workflow_data_dir)
    except WorldUnavailable as exc:
        raise ServeError(str(exc)) from None
    try:
        sock = _bind(host, port)
        alongside = Companion(companion)

        def listening(bound: int) -> None:
            if alongside.url is None:  # once: a broken start's phase already announced the server
                on_listening(listening_line(host, bound))
                alongside.start(f"http://{client_host(host)}:{bound}")

        rebuilds = 0
        if compiled.root is None:  # `eve dev` on a broken agent: its diagnostics until a save fixes it
            broken = BrokenBuild(compiled, bind_host=host)
            del compiled

            def phase(app: Starlette, copy: socket.socket, done: asyncio.Event) -> Awaitable[None]:
                return run_app(app, copy, on_listening=listening, stop=done, limits=limits)

            fixed = await wait_for_fix(broken, sock, serve=phase, stop=alongside.done)
            if fixed is None or fixed.root is None:
                await alongside.close()
                sock.close()
                return
            compiled, rebuilds = fixed, broken.rebuilds + 1
        assert compiled.root is not None
        runtime_options = _test_clock(runtime_options)
        runtime = Runtime(compiled.root, store, options=runtime_options, mode=mode, dormant_before=dormant_before)
        runtime.connections.listening_at(f"http://{client_host(host)}:{sock.getsockname()[1]}")  # OAuth redirects
        watching: asyncio.Task[None] | None = None
        stop_watching = asyncio.Event()
        try:
            heap.settle_heap(reload=reload)
            await runtime.start()
            app = create_app(
                runtime,
                compiled.manifest,
                mode=mode,
                auth=_auth(mode, host),
                stream_options=stream_options,
                generation=compiled.loader.generation,
                rebuilds=rebuilds,
                inspector=inspector,
            )
            if reload:
                reloader = Reloader(compiled.paths.app_root, runtime, compiled, on_reload=_show(app))
                del compiled  # the reloader tracks generations: nothing here may keep an old one alive
                watching = asyncio.create_task(reloader.run(stop_watching), name="eve-reload")
            await run_app(app, sock, on_listening=listening, stop=alongside.done, limits=limits)
            await alongside.close()
            logger.info("stopping: letting running steps reach a boundary (at most %gs)", stop_deadline)
        finally:
            stop_watching.set()
            if watching is not None:
                await asyncio.wait([watching], timeout=5)
            await runtime.stop(stop_deadline)
            sock.close()
    finally:
        await store.close()


def _show(app: Starlette) -> Callable[[Reloader, CompiledApp], None]:
    """Keep `GET /eve/v1/info` on the serving generation, with a failed build's diagnostics."""

    def show(reloader: Reloader, built: CompiledApp) -> None:
        app.state.show_build(
            reloader.manifest, failed=built.manifest if built.root is None else None, generation=reloader.generation
        )

    return show


SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits (Python's default: 0.005): a loop busy with a
provider's burst of chunks then hands each commit to the store's writer thread promptly."""


def _print_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def serve(
    app_root: Path,
    *,
    mode: Mode,
    host: str = "127.0.0.1",
    port: int = 3000,
    world: str = "local",
    database_url: str | None = None,
    runtime_options: RuntimeOptions | None = None,
    stream_options: StreamOptions | None = None,
    stop_deadline: float = 10.0,
    on_listening: Callable[[str], None] = _print_line,
    reload: bool = False,
    resume: bool = True,
    companion: Callable[[str], Awaitable[None]] | None = None,
    inspector: bool = False,
    trace: bool = False,
) -> None:
    """Compile the app at `app_root` and serve it until SIGTERM/SIGINT; returns after a clean shutdown.

    Args:
        app_root: The folder holding `agent/`.
        mode: `production` (`eve start`: bearer-token auth) or `development` (`eve dev`: loopback).
        host: The address to listen on (loopback by default).
        port: The port; 0 picks a free one (the listening line shows it).
        world: `local` (SQLite in `.eve/workflow-data`) or `postgres` (the database at `database_url`).
        database_url: The Postgres connection string (unused by the local world); never logged.
        runtime_options: Engine tunables.
        stream_options: Heartbeat and lease timing of live streams.
        stop_deadline: Seconds running steps get to reach a boundary when stopping.
        on_listening: Receives `eve listening on http://HOST:PORT` once requests are accepted
            (default: printed on stdout and flushed).
        reload: Rebuild on every change of `agent/` or `.env` (`eve dev`), see `eve_runtime.serving.reloader`.
        resume: Run the unfinished sessions of earlier runs; with False (`eve dev` without
            `--resume`) they stay dormant, and a message to one answers 409 `session_dormant`.
        companion: Run with the server's URL once it listens, in the server's event loop (the
            terminal UI of `eve dev`); when it returns, the server stops.
        inspector: Also serve the web inspector at `/` in `production` (behind the bearer token);
            `development` always serves it (`eve_runtime.server.inspector`).
        trace: Log a compact tree of each turn's spans (logger `eve.trace`; `eve dev --trace`).

    Spans are exported over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (see `eve_runtime.telemetry`).

    The HTTP connection limits come from `EVE_HTTP_*` (see `eve_runtime.serving.http_limits`).

    Raises:
        ServeError: The world is unavailable, the store is in use, the port cannot be bound, an
            `EVE_HTTP_*` variable is not a valid limit, or (`production`) `EVE_AUTH_TOKEN` is
            shorter than 16 characters or has surrounding whitespace.
        CompileError: The project has error diagnostics (without `reload`: `eve dev` serves
            them instead, see `eve_runtime.serving.broken`, and serves the first save that compiles).
    """
    load_env_files(app_root)
    REDACTOR.refresh()  # the secrets of `.env` too: masked in the store, the stream and the logs
    install_log_redaction()
    if world not in WORLDS:
        raise ServeError(f"Unknown world {world!r}: choose 'local' or 'postgres'.")
    if mode == "production" and (problem := token_problem(os.environ.get("EVE_AUTH_TOKEN"))):
        raise ServeError(problem)
    try:
        limits = HttpLimits.from_env()
    except ValueError as exc:
        raise ServeError(str(exc)) from None
    compiled = compile_app(app_root)
    if compiled.root is None and not reload:  # `eve dev` serves the diagnostics and waits for a fix
        raise CompileError(compiled.diagnostics)
    root = compiled.manifest.root
    for model_id, variable in missing_keys(root, os.environ).items():
        logger.warning(
            "the model %s needs an API key in %s, which is not set: its turns fail until it is", model_id, variable
        )
    if (telemetry := server_telemetry(trace, root.name if root is not None else app_root.name)) is not None:
        runtime_options = dataclasses.replace(runtime_options or RuntimeOptions(), telemetry=telemetry)
    main = _serve(
        compiled,
        reload=reload,
        dormant_before=None if resume else time.time(),
        mode=mode,
        host=host,
        port=port,
        world=world,
        database_url=database_url,
        runtime_options=runtime_options,
        stream_options=stream_options,
        stop_deadline=stop_deadline,
        on_listening=on_listening,
        companion=companion,
        limits=limits,
        inspector=inspector,
    )
    del compiled  # with reload, a generation is released once nothing uses it: this frame must not hold one
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        event_loop.run(main)
    finally:
        if telemetry is not None:
            telemetry.shutdown()
    logger.info("eve stopped")
