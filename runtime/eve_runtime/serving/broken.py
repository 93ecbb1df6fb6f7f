"""`eve dev` on an agent that does not compile: serve its diagnostics until a save fixes it.

Instead of exiting, `eve dev` listens as usual and answers from the failed build:

- `GET /eve/v1/health` is 503 `{ok: false, status: "failed", code: "agent_has_errors", reason,
  diagnostics}`;
- `GET /eve/v1/dev/build` is `{generation: 0, rebuilds, status: "failed", serving: false,
  diagnostics}`, so the terminal UI shows the errors as it shows a broken save's;
- the web inspector's page is served as usual (it shows the diagnostics);
- every other request (a message, a new session, info, a channel) is 409 `agent_has_errors`
  saying what to fix first, with the diagnostics.

It watches `agent/` and `.env` as the reloader does; the first save that compiles ends this
phase, and the server goes on serving that build on the same socket (nothing is lost: requests
arriving meanwhile wait in the socket's backlog).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import watchfiles
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.paths import load_env_files
from eve_runtime.server.auth import LoopbackAuth
from eve_runtime.server.inspector import inspector_routes
from eve_runtime.server.responses import ApiError, error_response, json_response
from eve_runtime.server.stream import StreamRegistry
from eve_runtime.serving.reloader import watched

__all__ = ["AGENT_HAS_ERRORS", "BrokenBuild", "wait_for_fix"]

logger = logging.getLogger("eve.reload")

AGENT_HAS_ERRORS = "agent_has_errors"
_WORKFLOW_ID = "workflow//eve//workflowEntry"


def _errors(compiled: CompiledApp) -> list[Diagnostic]:
    return [d for d in compiled.diagnostics if d.severity == "error"]


class BrokenBuild:
    """The newest failed build of an app that never compiled in this process, and its HTTP answers."""

    def __init__(self, compiled: CompiledApp, *, bind_host: str) -> None:
        self.compiled = compiled
        self.rebuilds = 0
        self.auth = LoopbackAuth(bind_host=bind_host)

    def diagnostics(self) -> list[dict[str, Any]]:
        """The diagnostics as `GET /eve/v1/dev/build` lists them."""
        return [d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in self.compiled.diagnostics]

    def message(self) -> str:
        """What a refused request is told: the first error, and how to go on."""
        errors = _errors(self.compiled)
        first = ""
        if errors:
            where = Path(errors[0].location())
            root = self.compiled.paths.app_root
            shown = where.relative_to(root) if where.is_absolute() and where.is_relative_to(root) else where
            first = f" First: {shown}: {errors[0].message}"
        return (
            f"The agent has {len(errors)} error(s), so eve dev cannot run it yet: fix them and save "
            f"(eve dev reloads on every save; `eve info` lists them).{first}"
        )

    def log(self) -> None:
        """Log every error, then the summary."""
        for diagnostic in _errors(self.compiled):
            logger.error("%s: %s [%s]", diagnostic.location(), diagnostic.message, diagnostic.code)
        logger.error("%s", self.message())

    def app(self) -> Starlette:
        """The routes of this phase (see the module docstring)."""

        async def health(request: Request) -> Response:
            body = {
                "ok": False,
                "status": "failed",
                "code": AGENT_HAS_ERRORS,
                "reason": self.message(),
                "diagnostics": self.diagnostics(),
                "workflowId": _WORKFLOW_ID,
            }
            response = json_response(body, 503)
            if request.method == "HEAD":
                response.body = b""
            return response

        async def build(request: Request) -> Response:
            refused = self.auth.check(request.scope)
            if refused is not None:
                return error_response(ApiError(refused.status, refused.error, refused.code))
            return json_response(
                {
                    "ok": True,
                    "generation": 0,
                    "rebuilds": self.rebuilds,
                    "status": "failed",
                    "serving": False,
                    "diagnostics": self.diagnostics(),
                }
            )

        async def refuse(request: Request) -> Response:
            refused = self.auth.check(request.scope)
            if refused is not None:
                return error_response(ApiError(refused.status, refused.error, refused.code))
            return error_response(
                ApiError(409, self.message(), AGENT_HAS_ERRORS, extra={"diagnostics": self.diagnostics()})
            )

        every = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
        app = Starlette(
            routes=[
                Route("/eve/v1/health", health, methods=["GET", "HEAD"]),
                Route("/eve/v1/dev/build", build, methods=["GET"]),
                *inspector_routes(self.auth),  # the page shows the diagnostics too
                Route("/{path:path}", refuse, methods=every),
            ]
        )
        app.state.streams = StreamRegistry()  # none are opened; stopping the server ends them all the same
        return app

    async def rebuild(self, app_root: Path) -> CompiledApp | None:
        """Compile again: the good build, or None (this one's diagnostics are served from now on)."""
        load_env_files(app_root)
        compiled = await asyncio.to_thread(compile_app, app_root)
        if compiled.root is not None:
            return compiled
        self.compiled, self.rebuilds = compiled, self.rebuilds + 1
        self.log()
        return None


async def wait_for_fix(
    broken: BrokenBuild,
    sock: socket.socket,
    *,
    serve: Callable[[Starlette, socket.socket, asyncio.Event], Any],
    stop: asyncio.Event,
) -> CompiledApp | None:
    """Serve `broken` on a copy of `sock` until a save compiles (its build) or `stop` is set (None).

    `serve(app, sock, done)` serves an app until `done` is set (or a signal stops it); the copy is
    closed with it and `sock` keeps listening for the next phase.
    """
    paths = broken.compiled.paths
    app_root, agent_root = paths.app_root.resolve(), paths.agent_root.resolve()
    done = asyncio.Event()
    fixed: list[CompiledApp] = []

    async def watch() -> None:
        async for _changes in watchfiles.awatch(
            app_root,
            watch_filter=lambda _change, path: watched(Path(path), app_root, agent_root),
            debounce=50,
            step=10,
            stop_event=done,
            rust_timeout=1000,
            yield_on_timeout=False,
        ):
            built = await broken.rebuild(app_root)
            if built is not None:
                fixed.append(built)
                done.set()
                return

    async def relay_stop() -> None:
        await stop.wait()
        done.set()

    broken.log()
    helpers = [asyncio.create_task(watch()), asyncio.create_task(relay_stop())]
    try:
        await serve(broken.app(), sock.dup(), done)
    finally:
        done.set()
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
    if fixed:
        logger.info("the agent compiles now: generation %d serves", fixed[0].loader.generation)
    return fixed[0] if fixed else None
