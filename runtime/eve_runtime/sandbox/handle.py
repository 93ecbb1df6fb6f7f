"""The live sandbox handle tools get (`await ctx.get_sandbox()`), for workspaces kept on this machine.

Files are read and written here, directly in the workspace's folders (through the path rules
of `eve_runtime.sandbox.paths`); commands go to the backend, with the sandbox's environment,
time limit, output limit and network policy. Commands running when the sandbox is stopped or
deleted are killed. What the framework's file tools record (the digest of the text `read_file`
last returned, for `write_file`'s read-before-write check) is kept beside the workspace, in
the sandbox's `sandbox.json`, out of the sandbox's own reach.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from eve_runtime.authoring.sandbox import SandboxConfig
from eve_runtime.authoring.sandbox_session import (
    CommandRequest,
    CommandResult,
    SandboxBackend,
    SandboxError,
    SandboxPathError,
    WorkspaceLayout,
)
from eve_runtime.sandbox.paths import ResolvedPath, resolve, trees_of

__all__ = ["STATE_FILE", "HostSandbox", "atomic_write", "base_environment"]

STATE_FILE = "sandbox.json"
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def base_environment(backend: SandboxBackend, layout: WorkspaceLayout) -> dict[str, str]:
    """What every command's environment starts from (the sandbox's `environment` is added to it)."""
    path = os.environ.get("PATH", _SYSTEM_PATH) if not backend.isolated else _SYSTEM_PATH
    return {"PATH": path, "HOME": layout.home, "LANG": "C.UTF-8", "TERM": "dumb"}


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step (a crash leaves the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".eve-tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class HostSandbox:
    """One session's sandbox whose files are folders on this machine (see the module docstring)."""

    def __init__(
        self,
        sandbox_id: str,
        directory: Path,
        backend: SandboxBackend,
        layout: WorkspaceLayout,
        config: SandboxConfig,
        *,
        on_delete: Callable[[str], Awaitable[None]],
    ) -> None:
        self._id = sandbox_id
        self.directory = directory
        self._backend = backend
        self.layout = layout
        self.config = config
        self._on_delete = on_delete
        self._running: set[asyncio.Task[CommandResult]] = set()
        self._state_lock = asyncio.Lock()
        self.deleted = False
        self.trees = trees_of(layout)
        """The two trees' files, opened without ever following a link out (see `tree_files`)."""

    @property
    def id(self) -> str:
        return self._id

    @property
    def backend(self) -> str:
        return self._backend.name

    @property
    def home(self) -> str:
        return self.layout.home

    def _check(self) -> None:
        if self.deleted:
            raise SandboxError("this sandbox was deleted: call ctx.get_sandbox() again for a fresh one")

    def resolved(self, path: str) -> ResolvedPath:
        """Where a tool path is (see `eve_runtime.sandbox.paths`)."""
        return resolve(path, self.layout)

    def resolve_path(self, path: str) -> str:
        return self.resolved(path).display

    def local_path(self, path: str) -> Path | None:
        return self.resolved(path).local

    # -- commands ------------------------------------------------------------------------

    async def run(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        self._check()
        if not isinstance(command, str) or not command.strip():
            raise ValueError("run(): the command is empty")
        where = self.resolved(cwd or "/workspace")
        if not await asyncio.to_thread(self.trees[where.tree].is_folder, where.relative, where.display):
            raise SandboxPathError(f"run(): {where.display} is not a folder")
        limit = self.config.timeout_seconds if timeout is None else min(float(timeout), self.config.timeout_seconds)
        request = CommandRequest(
            command=command,
            cwd=where.command_path,
            env={**base_environment(self._backend, self.layout), **self.config.environment, **dict(env or {})},
            timeout=limit,
            max_output_bytes=self.config.max_output_bytes,
            network=self.config.network.commands_online,
        )
        task = asyncio.ensure_future(self._backend.run(self.layout, request))
        self._running.add(task)
        try:
            return await task
        finally:
            self._running.discard(task)

    # -- files -----------------------------------------------------------------------------

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes | None:
        self._check()
        where = self.resolved(path)
        return await asyncio.to_thread(self.trees[where.tree].read, where.relative, where.display, limit=limit)

    async def read_text_file(self, path: str, *, limit: int | None = None) -> str | None:
        data = await self.read_file(path, limit=limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    async def write_file(self, path: str, data: bytes) -> None:
        self._check()
        target = self.resolved(path)
        if not target.relative:
            raise SandboxPathError(f"{path!r} names the folder {target.display}, not a file")
        await asyncio.to_thread(self.trees[target.tree].write, target.relative, target.display, bytes(data))

    async def write_text_file(self, path: str, content: str) -> None:
        if not isinstance(content, str):
            raise TypeError("write_text_file(): content must be a string")
        await self.write_file(path, content.encode("utf-8"))

    # -- the framework file tools' records ---------------------------------------------------

    def _state_path(self) -> Path:
        return self.directory / STATE_FILE

    def _load_state(self) -> dict[str, Any]:
        try:
            loaded = json.loads(self._state_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return loaded if isinstance(loaded, dict) else {}

    async def read_stamp(self, path: str) -> str | None:
        key = self.resolve_path(path)
        async with self._state_lock:
            stamps = (await asyncio.to_thread(self._load_state)).get("readStamps", {})
        value = stamps.get(key) if isinstance(stamps, dict) else None
        return value if isinstance(value, str) else None

    async def set_read_stamp(self, path: str, stamp: str | None) -> None:
        self._check()
        key = self.resolve_path(path)
        async with self._state_lock:
            state = await asyncio.to_thread(self._load_state)
            stamps = state.get("readStamps") if isinstance(state.get("readStamps"), dict) else {}
            assert isinstance(stamps, dict)
            if stamp is None:
                stamps.pop(key, None)
            else:
                stamps[key] = stamp
            state["readStamps"] = stamps
            payload = json.dumps(state, indent=2, sort_keys=True).encode()
            await asyncio.to_thread(atomic_write, self._state_path(), payload)

    # -- lifecycle ---------------------------------------------------------------------------

    async def stop(self) -> None:
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)  # killed: their outcomes concern nobody

    async def delete(self) -> None:
        await self.stop()
        if not self.deleted:
            self.deleted = True
            await self._on_delete(self._id)
