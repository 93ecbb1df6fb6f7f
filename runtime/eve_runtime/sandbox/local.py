"""The `local` backend: a plain subprocess in the workspace folder, for machines without bubblewrap.

It isolates nothing: a command can read and write whatever the server's user can, and reach
the network. It only keeps the server's environment out (commands get `PATH`, `LANG`, a `HOME`
of their own and the sandbox's `environment`) and, when the command ends or times out, kills
what it started, as bubblewrap does: its process group, and the processes that left the group
(`setsid`, a daemon) but still carry the command's `EVE_SANDBOX_RUN` in their environment. The
first use in a process logs a warning saying it isolates nothing.

Paths: commands run with the workspace folder as their working directory and `HOME` set to the
sandbox's home folder, so relative paths and `$HOME/...` mean what they mean under bubblewrap;
the absolute path `/workspace` does not exist for them (`$EVE_WORKSPACE` names the folder). The
file tools (`read_file`, `write_file`, ...) map `/workspace/...` onto the folder as usual.
"""

from __future__ import annotations

import logging
import secrets
import threading
from pathlib import Path

from eve_runtime.authoring.sandbox_session import CommandRequest, CommandResult, WorkspaceLayout
from eve_runtime.sandbox.process import run_process

__all__ = ["LocalBackend"]

logger = logging.getLogger("eve.sandbox")

RUN_VARIABLE = "EVE_SANDBOX_RUN"
"""Set to a fresh value for each command: what it leaves running (even after `setsid`) is found by it and killed."""
_WARNED = threading.Event()
WARNING = (
    "sandbox backend 'local' runs commands as plain subprocesses of this server: they are NOT isolated "
    "(they can read and write your files and reach the network). Install bubblewrap (apt-get install "
    "bubblewrap) for isolation, or set define_sandbox(backend='bwrap') to require it."
)


class LocalBackend:
    """Commands as subprocesses in the workspace folder (no isolation; warns once per process)."""

    name = "local"
    isolated = False

    def unavailable(self) -> str | None:
        return None

    def layout(self, workspace_dir: Path, home_dir: Path) -> WorkspaceLayout:
        """Commands see the folders where they are."""
        return WorkspaceLayout(
            workspace_dir=workspace_dir, home_dir=home_dir, home=str(home_dir), workspace=str(workspace_dir)
        )

    async def run(self, layout: WorkspaceLayout, request: CommandRequest) -> CommandResult:
        if not _WARNED.is_set():
            _WARNED.set()
            logger.warning(WARNING)
        run = secrets.token_hex(8)
        env = {**request.env, "EVE_WORKSPACE": str(layout.workspace_dir), RUN_VARIABLE: run}
        return await run_process(
            ["/bin/bash", "-c", request.command],
            cwd=Path(request.cwd),
            env=env,
            timeout=request.timeout,
            max_output_bytes=request.max_output_bytes,
            marker=f"{RUN_VARIABLE}={run}",
        )
