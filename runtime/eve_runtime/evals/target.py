"""Where evals run: the app in this process, or a running server (`--url`).

In process, the app is compiled and served on a free loopback port of this process, on the
app's local store (`.eve/workflow-data`), behind a bearer token made for the run, with tool stubs
granted: every eval's session stays in the store, so `eve sessions show` and the inspector
open it. Sessions of earlier runs stay dormant, as under `eve dev`. While a server (`eve dev`)
holds the store, run against it with `--url` instead.

With `--url`, the runner polls `/eve/v1/health`, reads `/eve/v1/info`, and authenticates with
`EVE_EVAL_AUTH_TOKEN` (as a bearer token) when it is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from eve_runtime.client import AsyncEveClient, ClientError
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.engine.tool_stubs import ToolStubBook
from eve_runtime.errors import CompileError, UserError
from eve_runtime.models.base import Model
from eve_runtime.project.compiler import compile_app
from eve_runtime.project.paths import load_env_files
from eve_runtime.server.app import create_app
from eve_runtime.server.auth import BearerTokenAuth
from eve_runtime.serving.serve import run_app
from eve_runtime.serving.worlds import WorldUnavailable, open_world
from eve_runtime.sessions.runtime import Runtime

__all__ = ["AUTH_TOKEN_ENV", "Target", "TargetUnavailable", "local_target", "remote_target"]

AUTH_TOKEN_ENV = "EVE_EVAL_AUTH_TOKEN"
HEALTH_WAIT = 30.0


class TargetUnavailable(UserError):
    """The evals have nowhere to run: the app does not compile, the store is in use, the URL does not answer."""


@dataclass
class Target:
    """A server the evals drive, and the model the judge defaults to."""

    client: AsyncEveClient
    url: str
    kind: str
    """`local` (in this process) or `remote` (`--url`)."""
    default_judge: Model | str | None = None
    info: dict[str, Any] = field(default_factory=dict)


def _agent_model(runtime: Runtime) -> Model | str | None:
    configured = runtime.agent.config.model
    if isinstance(configured, str):
        return runtime.model(configured)
    if isinstance(configured, Model):
        return configured
    return None  # a dynamic model: the judge needs one configured


@contextlib.asynccontextmanager
async def local_target(app_root: Path, *, runtime_options: RuntimeOptions | None = None) -> AsyncIterator[Target]:
    """Serve the app at `app_root` in this process for the duration of the block.

    Raises:
        TargetUnavailable: The app has errors, or its local store is held by a server.
    """
    load_env_files(app_root)
    compiled = compile_app(app_root)
    if compiled.root is None:
        raise TargetUnavailable(str(CompileError(compiled.diagnostics)))
    try:
        store = await open_world("local", None, compiled.paths.workflow_data_dir)
    except WorldUnavailable as exc:
        raise TargetUnavailable(
            f"{exc}\nWhile a server runs for this app, run the evals against it: eve eval --url URL"
        ) from None
    options = replace(runtime_options or RuntimeOptions(), tool_stubs=ToolStubBook(allowed=True))
    runtime = Runtime(compiled.root, store, mode="development", options=options, dormant_before=time.time())
    token = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop = asyncio.Event()
    listening = asyncio.Event()
    server: asyncio.Task[None] | None = None
    try:
        await runtime.start()
        app = create_app(runtime, compiled.manifest, mode="development", auth=BearerTokenAuth(token))
        server = asyncio.create_task(
            run_app(app, sock, on_listening=lambda _port: listening.set(), stop=stop, handle_signals=False)
        )
        await listening.wait()
        async with AsyncEveClient(url, token=token, timeout=60.0, stream_read_timeout=300.0) as client:
            yield Target(client, url, "local", _agent_model(runtime))
    finally:
        stop.set()
        if server is not None:
            await server
        sock.close()
        await runtime.stop()
        await store.close()


@contextlib.asynccontextmanager
async def remote_target(url: str, *, token: str | None = None) -> AsyncIterator[Target]:
    """A running server at `url` (its token: `token`, else `EVE_EVAL_AUTH_TOKEN`).

    Raises:
        TargetUnavailable: The server does not become healthy, or refuses the token.
    """
    token = token or os.environ.get(AUTH_TOKEN_ENV) or None
    async with AsyncEveClient(url, token=token, timeout=60.0, stream_read_timeout=300.0) as client:
        deadline = time.monotonic() + HEALTH_WAIT
        while True:
            try:
                await client.health()
                break
            except ClientError as exc:
                if time.monotonic() > deadline:
                    raise TargetUnavailable(f"{url} does not answer /eve/v1/health: {exc}") from None
                await asyncio.sleep(0.25)
        try:
            info = await client.info()
        except ClientError as exc:
            hint = f" Set {AUTH_TOKEN_ENV} to the server's token." if not token else f" Check {AUTH_TOKEN_ENV}."
            raise TargetUnavailable(f"{url} refused /eve/v1/info: {exc}.{hint}") from None
        model = info.get("model")
        model_id = model.get("id") if isinstance(model, dict) else None
        yield Target(client, client.base_url, "remote", model_id or None, info)
