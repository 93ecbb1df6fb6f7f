"""`eve dev`'s hot reload: every good save is a new generation of the app, in the same process.

The reloader watches `agent/` and the app's `.env` files. On a change it compiles the app again
(user code imported under a fresh namespace, see `eve_runtime.project.loader`):

- when the build is good, it becomes the runtime's agent: idle sessions move to it on their next
  delivery, while sessions with work finish it on the generation they run (see
  `eve_runtime.engine.handoff`);
- when the build has errors, the last good generation keeps serving, and the errors are logged
  and shown by `GET /eve/v1/info` until a save fixes them.

A generation's modules are released once nothing uses its agent any more (no session working on
it, not the current one): `weakref.finalize` on its root agent.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.paths import load_env_files
from eve_runtime.sessions.runtime import Runtime

__all__ = ["Reload", "Reloader", "live_generations", "watched"]

logger = logging.getLogger("eve.reload")

_live: set[int] = set()


def live_generations() -> set[int]:
    """The generations whose modules are still loaded (for tests and `eve dev`'s status)."""
    return set(_live)


def watched(path: Path, app_root: Path, agent_root: Path) -> bool:
    """Whether a change to `path` calls for a rebuild: files of `agent/` and the app's `.env` files."""
    if path.name.endswith((".pyc", ".pyo", "~")) or "__pycache__" in path.parts or path.name.startswith(".#"):
        return False
    if path.is_relative_to(agent_root):
        return True
    return path.parent == app_root and path.name in (".env", ".env.local")


def _track(loader: ModuleLoader, compiled: CompiledApp) -> None:
    """Release the generation's modules when its root agent is no longer used."""
    if compiled.root is None:
        return
    _live.add(loader.generation)

    def release(loader: ModuleLoader = loader) -> None:
        loader.release()
        _live.discard(loader.generation)
        logger.debug("released generation %d", loader.generation)

    weakref.finalize(compiled.root, release)


@dataclass(frozen=True)
class Reload:
    """The outcome of one rebuild."""

    ok: bool
    generation: int
    duration_ms: float
    diagnostics: list[Diagnostic]


class Reloader:
    """Rebuilds the app on changes and hands good builds to the runtime (see the module docstring)."""

    def __init__(
        self,
        app_root: Path,
        runtime: Runtime,
        compiled: CompiledApp,
        *,
        on_reload: Callable[[Reloader, CompiledApp], None] | None = None,
        debounce_ms: int = 50,
    ) -> None:
        self.app_root = app_root.resolve()
        self.agent_root = compiled.paths.agent_root.resolve()
        self.runtime = runtime
        self.generation = compiled.loader.generation
        self.manifest = compiled.manifest
        """The manifest of the generation serving new turns."""
        self.failed: CompiledApp | None = None
        """The last build, when it had errors (the previous good one still serves)."""
        self.on_reload = on_reload
        self.debounce_ms = debounce_ms
        _track(compiled.loader, compiled)

    def watches(self, path: Path) -> bool:
        """Whether a change to `path` calls for a rebuild: files of `agent/` and the app's `.env` files."""
        return watched(path, self.app_root, self.agent_root)

    async def run(self, stop: asyncio.Event) -> None:
        """Watch and rebuild until `stop` is set."""
        async for changes in watchfiles.awatch(
            self.app_root,
            watch_filter=lambda _change, path: self.watches(Path(path)),
            debounce=self.debounce_ms,
            step=10,
            stop_event=stop,
            rust_timeout=1000,
            yield_on_timeout=False,
        ):
            names = sorted({Path(path).relative_to(self.app_root).as_posix() for _change, path in changes})
            logger.info("changed: %s", ", ".join(names))
            await self.rebuild()

    async def rebuild(self) -> Reload:
        """Compile the app again; a good build serves the next turns, a failed one is reported."""
        started = time.perf_counter()
        load_env_files(self.app_root)
        compiled = await asyncio.to_thread(compile_app, self.app_root)
        duration = (time.perf_counter() - started) * 1000
        generation = compiled.loader.generation
        outcome = Reload(compiled.ok, generation, duration, list(compiled.diagnostics))
        if compiled.root is None:
            self.failed = compiled
            errors = [d for d in compiled.diagnostics if d.severity == "error"]
            for diagnostic in errors:
                where = diagnostic.source_path
                location = f"{where}:{diagnostic.line}" if diagnostic.line else where
                logger.error("%s: %s [%s]", location, diagnostic.message, diagnostic.code)
            logger.error(
                "the agent has %d error(s): generation %d keeps serving until they are fixed",
                len(errors),
                self.generation,
            )
        else:
            _track(compiled.loader, compiled)
            self.runtime.replace_agent(compiled.root)
            self.generation = generation
            self.manifest = compiled.manifest
            self.failed = None
            logger.info("reloaded: generation %d serves new turns (%.0f ms)", generation, duration)
        if self.on_reload is not None:
            self.on_reload(self, compiled)
        return outcome
