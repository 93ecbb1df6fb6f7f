"""The `bwrap` backend: each command in a fresh bubblewrap sandbox.

What a command sees: the system folders (`/usr`, `/etc`, `/opt`, `/var` and the `/bin`-style
links) and the root itself read-only, a private `/tmp`, `/proc` and `/dev`, the workspace
read-write at `/workspace`, its home folder read-write at `/home/eve`, and nothing else of the
machine (not the app, not eve's store, not other sandboxes: when the app lives under one of the
system folders, say `/srv/app`, an empty folder is mounted over it; nor what in `/etc` and
`/var` only eve's user may read, such as `/etc/shadow` when eve runs as root). Every namespace
is unshared (no network unless the policy allows it: then the host's network is shared), all
capabilities are dropped, and the environment is exactly what eve passes. bubblewrap's PID namespace means that
killing it on timeout ends every process the command started.

Whether bubblewrap runs here is probed once per process: the package may be missing, or the
kernel may forbid the namespaces it needs (some containers do); `unavailable()` says which.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from functools import cache
from pathlib import Path

from eve_runtime.authoring.sandbox_session import WORKSPACE, CommandRequest, CommandResult, WorkspaceLayout
from eve_runtime.sandbox.process import run_process

__all__ = ["BWRAP_HOME", "BwrapBackend", "bwrap_argv", "bwrap_unavailable"]

BWRAP_HOME = "/home/eve"
"""`$HOME` inside the sandbox."""
SYSTEM_DIRECTORIES = ("/usr", "/etc", "/opt", "/var", "/srv")
"""Bound read-only when they exist (other top-level folders, `/root` and `/home` included, are not)."""
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Recreated as the same links (a merged-`/usr` system), or bound read-only when they are folders."""


def _system_arguments() -> list[str]:
    arguments: list[str] = []
    for directory in SYSTEM_DIRECTORIES:
        if os.path.isdir(directory) and not os.path.islink(directory):
            arguments += ["--ro-bind", directory, directory]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            arguments += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            arguments += ["--ro-bind", link, link]
    return arguments


PRIVATE_SCAN = (("/etc", 8), ("/var", 3))
"""Where files only eve's user may read are looked for, and how many folders deep."""


def _private_system_files() -> tuple[tuple[str, bool], ...]:
    """What in `/etc` and `/var` others may not read but this process may, and whether each is a folder.

    Bound read-only, these would show commands (which run as eve's own user) `/etc/shadow`, a
    database's files under `/var/lib` or debconf's passwords when eve runs as root. The scan is
    made once per process; what it found and is gone since (a private folder in `/var/tmp` another
    program removed) is left out, since bubblewrap cannot mount over a path that does not exist.
    """
    return tuple(entry for entry in _scan_private_system_files() if os.path.lexists(entry[0]))


@cache
def _scan_private_system_files() -> tuple[tuple[str, bool], ...]:
    found: list[tuple[str, bool]] = []
    for top, depth in PRIVATE_SCAN:
        base = top.count("/")
        for current, folders, files in os.walk(top):
            here: list[tuple[str, bool]] = []
            for name in [*folders, *files]:
                path = os.path.join(current, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISLNK(info.st_mode) or info.st_mode & stat.S_IROTH or not _readable_without_privileges(info):
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_size == 0:
                    continue  # an empty lock file holds nothing (and dpkg's must stay to query packages)
                here.append((path, stat.S_ISDIR(info.st_mode)))
            if len(here) > 3 and current != top:  # one mount for the folder instead of one per file
                found.append((current, True))
                folders[:] = []
                continue
            found += here
            hidden = {path for path, _ in here}
            deeper = current.count("/") - base < depth
            folders[:] = sorted(f for f in folders if deeper and os.path.join(current, f) not in hidden)
    masked = {path for path, folder in found if folder}
    return tuple((path, folder) for path, folder in found if not any(path.startswith(m + "/") for m in masked))


def _readable_without_privileges(info: os.stat_result) -> bool:
    """Whether eve's user reads it as its owner or through its group: so can commands, with no capabilities."""
    if info.st_uid == os.geteuid():
        return bool(info.st_mode & stat.S_IRUSR)
    return info.st_gid in {os.getegid(), *os.getgroups()} and bool(info.st_mode & stat.S_IRGRP)


def _inside_system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in map(os.path.realpath, SYSTEM_DIRECTORIES))


def _hidden_arguments(layout: WorkspaceLayout) -> list[str]:
    """Masks over what the read-only system folders would show of eve's own files and of other sandboxes.

    An app kept under `/opt`, `/srv` or `/var` (say `/srv/app`) would otherwise be readable from
    its sandboxes: its code and `.env`, eve's store in `.eve/`, every other session's workspace.
    """
    sandbox_dir = Path(os.path.commonpath([layout.workspace_dir, layout.home_dir]))
    candidates = [sandbox_dir.parent]
    candidates += [folder.parent for folder in sandbox_dir.parents if folder.name == ".eve"][:1]
    masks: list[str] = []
    for candidate in sorted({os.path.realpath(c) for c in candidates}, key=len):
        if candidate in ("/", "/usr", "/etc") or not _inside_system(candidate):
            continue
        if any(candidate == m or candidate.startswith(m + "/") for m in masks):
            continue
        masks.append(candidate)
    arguments: list[str] = []
    for mask in masks:
        arguments += ["--tmpfs", mask, "--remount-ro", mask]
    for path, folder in _private_system_files():
        arguments += ["--tmpfs", path] if folder else ["--ro-bind", "/dev/null", path]
    return arguments


def bwrap_argv(executable: str, layout: WorkspaceLayout, request: CommandRequest) -> list[str]:
    """The bubblewrap command line that runs `request` in `layout`."""
    arguments = [
        executable,
        "--die-with-parent",
        "--new-session",
        "--unshare-all",
        *(["--share-net"] if request.network else []),
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        *_system_arguments(),
        *_hidden_arguments(layout),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--bind",
        str(layout.workspace_dir),
        layout.workspace,
        "--bind",
        str(layout.home_dir),
        layout.home,
        "--remount-ro",
        "/",
        "--chdir",
        request.cwd,
        "--clearenv",
    ]
    for key, value in request.env.items():
        arguments += ["--setenv", key, value]
    return [*arguments, "--", "/bin/bash", "-c", request.command]


@cache
def _probe(executable: str) -> str | None:
    try:
        completed = subprocess.run(
            [executable, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not be started ({exc})"
    if completed.returncode != 0:
        detail = completed.stderr.decode("utf-8", errors="replace").strip() or f"exit code {completed.returncode}"
        return (
            f"the kernel forbids the namespaces bubblewrap needs ({detail}); allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1) or run with more privileges, or use backend='local'"
        )
    return None


def bwrap_unavailable(executable: str | None = None) -> str | None:
    """None when bubblewrap runs here; else why not (not installed, or namespaces forbidden)."""
    found = executable or shutil.which("bwrap")
    if found is None:
        return "bubblewrap is not installed (apt-get install bubblewrap, or dnf install bubblewrap)"
    return _probe(found)


class BwrapBackend:
    """Commands in bubblewrap: no network by default, the system read-only, only the workspace writable."""

    name = "bwrap"
    isolated = True

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable

    def unavailable(self) -> str | None:
        return bwrap_unavailable(self.executable)

    async def run(self, layout: WorkspaceLayout, request: CommandRequest) -> CommandResult:
        executable = self.executable or shutil.which("bwrap") or "bwrap"
        return await run_process(
            bwrap_argv(executable, layout, request),
            cwd=layout.workspace_dir,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            timeout=request.timeout,
            max_output_bytes=request.max_output_bytes,
        )

    def layout(self, workspace_dir: Path, home_dir: Path) -> WorkspaceLayout:
        """Where a workspace's folders appear inside bubblewrap."""
        return WorkspaceLayout(workspace_dir=workspace_dir, home_dir=home_dir, home=BWRAP_HOME, workspace=WORKSPACE)
