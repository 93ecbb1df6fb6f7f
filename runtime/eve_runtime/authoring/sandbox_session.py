"""The live sandbox as tools see it, and the small protocol a sandbox backend implements.

`await ctx.get_sandbox()` returns a [`Sandbox`][eve_runtime.authoring.sandbox_session.Sandbox]:
the session's workspace, rooted at `/workspace`, with its commands and files. Relative paths
resolve under `/workspace`; `$HOME/...` names the sandbox's home folder. `run()` returns a
[`CommandResult`][eve_runtime.authoring.sandbox_session.CommandResult] and never raises for a
nonzero exit code. A path outside `/workspace` and `$HOME` raises `SandboxPathError`, which a
tool reports to the model like any other failure.

A backend ([`SandboxBackend`][eve_runtime.authoring.sandbox_session.SandboxBackend]) runs one
command against a workspace whose files live in folders on this machine
([`WorkspaceLayout`][eve_runtime.authoring.sandbox_session.WorkspaceLayout]); eve does the rest
(folders per session, seeding, skills, file access, limits, stop and delete).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from eve_runtime.errors import EveError

__all__ = [
    "WORKSPACE",
    "CommandRequest",
    "CommandResult",
    "Sandbox",
    "SandboxAccess",
    "SandboxBackend",
    "SandboxError",
    "SandboxPathError",
    "WorkspaceLayout",
]

WORKSPACE = "/workspace"
"""Where the workspace is, as commands and tools name it."""


class SandboxError(EveError):
    """A sandbox could not do what was asked (it could not start, a bootstrap command failed, ...)."""


class SandboxPathError(SandboxError, ValueError):
    """A path names something outside the sandbox's files (`/workspace` and `$HOME`)."""


@dataclass(frozen=True)
class CommandResult:
    """What one command did. A nonzero `exit_code` is a result, not an error."""

    exit_code: int
    stdout: str
    stderr: str
    truncated: bool = False
    """stdout or stderr was cut to the output limit (the end is kept)."""
    timed_out: bool = False
    """The command ran past its time limit and was killed with everything it started."""
    duration_ms: int = 0


@dataclass(frozen=True)
class WorkspaceLayout:
    """Where one sandbox's files are on this machine, and what commands call them."""

    workspace_dir: Path
    """The folder seen as `/workspace`."""
    home_dir: Path
    """The folder seen as `$HOME`."""
    home: str
    """`$HOME` as commands see it (`/home/eve` under bubblewrap; the folder itself for `local`)."""
    workspace: str = WORKSPACE
    """`/workspace` as commands see it (the folder itself for `local`)."""


@dataclass(frozen=True)
class CommandRequest:
    """One command for a backend to run."""

    command: str
    """A shell command line, run with `/bin/bash -c`."""
    cwd: str
    """The working directory as commands see it (under `layout.workspace` or `layout.home`)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The whole environment of the command (nothing of eve's own environment leaks in)."""
    timeout: float = 120.0
    """Seconds before the command and everything it started are killed."""
    max_output_bytes: int = 1024 * 1024
    """Bytes of stdout and of stderr kept (the end of each)."""
    network: bool = False
    """Whether the command may use the network."""


@runtime_checkable
class SandboxBackend(Protocol):
    """What runs a sandbox's commands: `bwrap`, `local`, or one of your own.

    Example:
        ```python
        from eve_runtime import define_sandbox
        from eve_runtime.sandbox import run_process

        class Firejail:
            name = "firejail"
            isolated = True

            def unavailable(self) -> str | None:
                return None if shutil.which("firejail") else "firejail is not installed"

            async def run(self, layout, request):
                argv = ["firejail", f"--private={layout.workspace_dir}", "bash", "-c", request.command]
                return await run_process(argv, cwd=layout.workspace_dir, env=request.env,
                                         timeout=request.timeout, max_output_bytes=request.max_output_bytes)

        sandbox = define_sandbox(backend=Firejail())
        ```
    """

    @property
    def name(self) -> str:
        """Shown in `eve info` and on the sandbox handle."""
        ...

    @property
    def isolated(self) -> bool:
        """Whether commands are kept from the rest of the machine (`local` is not)."""
        ...

    def unavailable(self) -> str | None:
        """None when the backend can run here; else why not, in a sentence that says how to fix it."""
        ...

    async def run(self, layout: WorkspaceLayout, request: CommandRequest) -> CommandResult:
        """Run one command to completion; killed (with everything it started) when cancelled or timed out."""
        ...


class Sandbox(Protocol):
    """A session's live sandbox (`await ctx.get_sandbox()`)."""

    @property
    def id(self) -> str:
        """The sandbox's id: the session that owns it."""
        ...

    @property
    def backend(self) -> str:
        """The backend running its commands (`bwrap`, `local`, ...)."""
        ...

    @property
    def home(self) -> str:
        """`$HOME` as commands see it."""
        ...

    def resolve_path(self, path: str) -> str:
        """The absolute path a tool path names (`notes.md` is `/workspace/notes.md`); raises `SandboxPathError`."""
        ...

    def local_path(self, path: str) -> Path | None:
        """Where a sandbox path's file is on this machine, when the backend keeps files here."""
        ...

    async def run(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """Run a shell command in `/workspace` (or `cwd`), within the sandbox's time and output limits."""
        ...

    async def read_text_file(self, path: str, *, limit: int | None = None) -> str | None:
        """A file's text (UTF-8, invalid bytes replaced), or None when there is no such file.

        Only regular files are read (a named pipe or a device raises `SandboxError`); with
        `limit`, a file of more bytes raises `SandboxError` instead of being read.
        """
        ...

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes | None:
        """A file's bytes, or None when there is no such file (see `read_text_file` for `limit`)."""
        ...

    async def write_text_file(self, path: str, content: str) -> None:
        """Write a whole file (folders are created), replacing it atomically."""
        ...

    async def write_file(self, path: str, data: bytes) -> None:
        """Write a whole file's bytes (folders are created), replacing it atomically."""
        ...

    async def read_stamp(self, path: str) -> str | None:
        """What `read_file` last recorded for a path (the digest of the text it read), if anything."""
        ...

    async def set_read_stamp(self, path: str, stamp: str | None) -> None:
        """Record (or forget) the digest of a path's text as last read or written by the framework's file tools."""
        ...

    async def stop(self) -> None:
        """Stop every running command; the files stay, and the next access carries on with them."""
        ...

    async def delete(self) -> None:
        """Stop and remove the sandbox: the next access starts a fresh one from the agent's sandbox definition."""
        ...


class SandboxAccess(Protocol):
    """How the runtime hands a session its sandbox (the engine asks through this port)."""

    async def sandbox_for(self, session_id: str, *, node_id: str, parent_session_id: str | None) -> Sandbox:
        """The sandbox of a session running agent `node_id` (its own, or its parent's when it shares it)."""
        ...

    async def discard(self, session_id: str) -> None:
        """The session was retired: remove the sandbox it owns (one it shares with its parent stays)."""
        ...
