"""Running one command as a child process: time limit, capped output, the whole process tree killed.

The child starts in a session of its own, so it leads a process group: when it ends, times out
or is cancelled, the group is sent SIGKILL (for bubblewrap that ends the sandbox's PID namespace,
and with it everything inside). stdout and stderr are read as they come; only the last
`max_output_bytes` of each are kept, so a runaway writer costs bounded memory.

A process that leaves the group (`setsid`, a daemon) is out of reach of that signal. Under
bubblewrap the PID namespace ends it anyway; for the others the caller can pass `marker`, a
`NAME=value` entry of the command's environment that its descendants inherit: once the command
ends (or is killed), every process of this user whose environment carries it is killed too
(read from `/proc`, where there is one).

When the server itself dies (a crash, `kill -9`), the child gets SIGKILL from the kernel too:
it is started through util-linux's `setpriv --pdeathsig KILL` where that exists (it does on
Debian). Under bubblewrap (`--die-with-parent`) that ends everything the command started; a
`local` command's own children can outlive a server killed that way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from eve_runtime.authoring.sandbox_session import CommandResult

if TYPE_CHECKING:
    import asyncio  # imported where a command runs: compiling an app (`eve info`) never runs one

__all__ = ["TIMEOUT_EXIT_CODE", "kill_marked", "run_process"]

TIMEOUT_EXIT_CODE = 124
"""The exit code of a command killed at its time limit (as `timeout(1)` reports it)."""
_CHUNK = 64 * 1024


class _Tail:
    """The last `limit` bytes of a stream, and whether anything before them was dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = False

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.limit:  # trim in batches: amortized O(1) per byte
            del self.data[: len(self.data) - self.limit]
            self.dropped = True

    def text(self) -> str:
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]
            self.dropped = True
        return self.data.decode("utf-8", errors="replace")


async def _pump(stream: asyncio.StreamReader | None, tail: _Tail) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        tail.add(chunk)


@cache
def _death_signal_prefix() -> tuple[str, ...]:
    setpriv = shutil.which("setpriv")
    return (setpriv, "--pdeathsig", "KILL", "--") if setpriv else ()


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Until the process has exited, even while something it started holds its pipes open.

    (`Process.wait()` also waits for the pipes to close, so a background job, or a daemon that
    escaped the group, would make a finished command look like one still running.)
    """
    import asyncio

    waiter = asyncio.ensure_future(process.wait())
    try:
        while process.returncode is None and not waiter.done():
            await asyncio.wait({waiter}, timeout=0.05)
    finally:
        waiter.cancel()


def _marked(marker: bytes) -> list[int]:
    """This user's processes whose environment holds the entry `marker`."""
    uid = os.getuid()
    found = []
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat().st_uid != uid:
                    continue
                with open(f"/proc/{entry.name}/environ", "rb") as handle:
                    environment = handle.read()
            except OSError:
                continue
            if marker in environment.split(b"\0"):
                found.append(int(entry.name))
    return found


def kill_marked(marker: str) -> int:
    """SIGKILL every process of this user carrying `marker` in its environment (until none is left); how many."""
    if not os.path.isdir("/proc"):
        return 0
    killed = 0
    for _ in range(10):  # a process may fork while it is being found: look again until none is left
        pids = _marked(marker.encode())
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_output_bytes: int,
    marker: str | None = None,
) -> CommandResult:
    """Run `argv` to completion within `timeout` seconds; cancelling the caller kills it too.

    A command that runs too long is killed and reported with exit code 124 and `timed_out`;
    one killed by a signal reports 128 + the signal's number, as shells do. With `marker` (an
    entry of `env`), the processes that left the command's group are found and killed as well.
    """
    import asyncio

    if marker is not None and env.get(marker.partition("=")[0]) != marker.partition("=")[2]:
        raise ValueError("run_process(): the marker must be an entry of the environment")
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *_death_signal_prefix(),
        *argv,
        cwd=str(cwd),
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    out, err = _Tail(max_output_bytes), _Tail(max_output_bytes)
    readers = asyncio.gather(_pump(process.stdout, out), _pump(process.stderr, err))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(_exited(process), timeout)
        except TimeoutError:
            timed_out = True
        _kill_group(process)  # the command ended (or ran out of time): what it left in its group goes with it
        if marker is not None:
            await asyncio.to_thread(kill_marked, marker)  # and what left the group (which frees the pipes)
        await _exited(process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(readers), 2.0)  # a daemon holding the pipes open is not waited for
    except BaseException:
        _kill_group(process)  # cancelled (a stopped sandbox, a cancelled turn): nothing outlives the call
        if marker is not None:
            kill_marked(marker)
        readers.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(_exited(process), 5.0)
        raise
    finally:
        if not readers.done():
            readers.cancel()
            with contextlib.suppress(BaseException):
                await readers
    code = process.returncode if process.returncode is not None else -1
    if timed_out:
        code = TIMEOUT_EXIT_CODE
    elif code < 0:
        code = 128 - code
    stderr = err.text()
    if timed_out:
        if stderr and not stderr.endswith("\n"):
            stderr += "\n"
        stderr += f"[killed: the command ran longer than {timeout:g} s]\n"
    return CommandResult(
        exit_code=code,
        stdout=out.text(),
        stderr=stderr,
        truncated=out.dropped or err.dropped,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
    )
