"""The workspaces of an app: one folder per sandbox under `.eve/sandboxes/`, kept across restarts.

```
.eve/sandboxes/<sandbox id>/
  workspace/      /workspace
  home/           $HOME (skills under .agents/skills/)
  sandbox.json    revision, backend, whether it is prepared, the file tools' records
```

A sandbox's id is the session that owns it. The first access prepares the folder: the seed is
copied, the skills placed, the bootstrap commands run; `sandbox.json` says `prepared` only once
all of that succeeded, so a crash or a failed bootstrap leaves a folder the next access wipes
and prepares again. A prepared workspace is never prepared again: a restart, a redeploy or a
changed seed leave its files as they are. `discard` removes it (the session was reset).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import time
from pathlib import Path
from typing import Any

from eve_runtime.authoring.sandbox_session import CommandRequest, SandboxBackend, SandboxError
from eve_runtime.sandbox.backends import backend_for, layout_for
from eve_runtime.sandbox.handle import STATE_FILE, HostSandbox, atomic_write, base_environment
from eve_runtime.sandbox.spec import SKILLS_FOLDER, SandboxSpec, seed_files

__all__ = ["Workspaces"]

logger = logging.getLogger("eve.sandbox")

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_BOOTSTRAP_OUTPUT = 4000


class Workspaces:
    """The sandboxes of one app, by id (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._open: dict[str, HostSandbox] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def directory(self, sandbox_id: str) -> Path:
        """The folder of a sandbox."""
        if not _ID.match(sandbox_id):
            raise SandboxError(f"{sandbox_id!r} is not a valid sandbox id")
        return self.root / sandbox_id

    async def open(self, sandbox_id: str, spec: SandboxSpec) -> HostSandbox:
        """The live sandbox `sandbox_id`, prepared from `spec` when it is new.

        Raises:
            SandboxError: The backend cannot run here, or a bootstrap command failed.
        """
        lock = self._locks.setdefault(sandbox_id, asyncio.Lock())
        async with lock:
            handle = self._open.get(sandbox_id)
            if handle is not None and not handle.deleted:
                handle.config = spec.config  # limits and environment follow the agent's newest definition
                return handle
            backend = backend_for(spec.config)
            directory = self.directory(sandbox_id)
            layout = layout_for(backend, directory / "workspace", directory / "home")
            state = await asyncio.to_thread(_load_state, directory)
            if not state.get("prepared"):
                started = time.monotonic()
                await self._prepare(directory, spec, backend, sandbox_id)
                logger.info("sandbox %s prepared in %.0f ms", sandbox_id, (time.monotonic() - started) * 1000)
            handle = HostSandbox(sandbox_id, directory, backend, layout, spec.config, on_delete=self.discard)
            self._open[sandbox_id] = handle
            return handle

    async def _prepare(self, directory: Path, spec: SandboxSpec, backend: SandboxBackend, sandbox_id: str) -> None:
        await asyncio.to_thread(_lay_out, directory, spec)
        layout = layout_for(backend, directory / "workspace", directory / "home")
        config = spec.config
        for command in config.bootstrap:
            result = await backend.run(
                layout,
                CommandRequest(
                    command=command,
                    cwd=layout.workspace,
                    env={**base_environment(backend, layout), **config.environment},
                    timeout=config.timeout_seconds,
                    max_output_bytes=config.max_output_bytes,
                    network=config.network.commands_online,
                ),
            )
            if result.exit_code != 0:
                output = (result.stderr or result.stdout).strip()[-_BOOTSTRAP_OUTPUT:]
                raise SandboxError(
                    f"the sandbox's bootstrap command {command!r} failed with exit code {result.exit_code}"
                    + (f": {output}" if output else "")
                )
        state = {
            "id": sandbox_id,
            "revision": spec.revision,
            "backend": backend.name,
            "createdAt": time.time(),
            "prepared": True,
        }
        await asyncio.to_thread(atomic_write, directory / STATE_FILE, json.dumps(state, indent=2).encode())

    async def discard(self, sandbox_id: str) -> None:
        """Stop a sandbox and remove its folder (the next access starts a fresh one)."""
        directory = self.directory(sandbox_id)
        async with self._locks.setdefault(sandbox_id, asyncio.Lock()):
            handle = self._open.pop(sandbox_id, None)
            if handle is not None:
                handle.deleted = True
                await handle.stop()
            await asyncio.to_thread(shutil.rmtree, directory, True)

    def revision_of(self, sandbox_id: str) -> str | None:
        """The revision a prepared sandbox was made from, if it exists."""
        value = _load_state(self.directory(sandbox_id)).get("revision")
        return value if isinstance(value, str) else None

    async def close(self) -> None:
        """Stop every command still running (the runtime stops); the workspaces stay."""
        handles = list(self._open.values())
        self._open.clear()
        await asyncio.gather(*(handle.stop() for handle in handles), return_exceptions=True)


def _load_state(directory: Path) -> dict[str, Any]:
    try:
        loaded = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _lay_out(directory: Path, spec: SandboxSpec) -> None:
    """A fresh folder with the seed and the skills (what an unfinished attempt left is wiped)."""
    shutil.rmtree(directory, ignore_errors=True)
    workspace = directory / "workspace"
    home = directory / "home"
    workspace.mkdir(parents=True)
    home.mkdir()
    for relative, source in seed_files(spec.seed_dir):
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for skill in spec.skills:
        base = home / SKILLS_FOLDER / skill.name
        for relative, content in skill.files.items():
            target = base / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
