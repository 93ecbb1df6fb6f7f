"""Driving a command through a pseudo-terminal (stdlib `pty`), as a person at a terminal would.

What was printed is also fed to a terminal emulator (`pyte`), so a test can read the screen as a
person sees it (with the scrollback): what a redraw erased is gone there, unlike in the raw output.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Mapping
from pathlib import Path

import pyte

__all__ = ["PtySession", "plain"]

_ESCAPES = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>78]|\r")


def plain(data: bytes) -> str:
    """Terminal output without its escape sequences and carriage returns."""
    return _ESCAPES.sub("", data.decode("utf-8", errors="replace"))


class PtySession:
    """A child process whose stdin, stdout and stderr are one pseudo-terminal (120x40)."""

    def __init__(self, argv: list[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, dict(env))
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.output = b""
        self._screen = pyte.HistoryScreen(120, 40, history=5000)
        self._stream = pyte.ByteStream(self._screen)
        self.returncode: int | None = None
        self._mark = 0

    def tail(self, characters: int = 3000) -> str:
        """The end of what was printed, blank lines left out (for failure messages)."""
        return "\n".join(line for line in self.text.splitlines() if line.strip())[-characters:]

    @property
    def text(self) -> str:
        """Everything printed so far, without escape sequences."""
        return plain(self.output)

    def screen_lines(self) -> list[str]:
        """What a person sees: the scrollback, then the 40 lines of the screen (trailing blanks cut)."""
        self._pump(0.05)
        columns = range(self._screen.columns)
        history = ["".join(line[x].data for x in columns) for line in self._screen.history.top]
        lines = [line.rstrip() for line in history + list(self._screen.display)]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def _pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.output += chunk
        self._stream.feed(chunk)
        for _request in range(chunk.count(b"\x1b[6n")):  # a cursor position request: answer as a terminal does
            os.write(self.fd, b"\x1b[1;1R")
        return bool(chunk)

    def expect(self, pattern: str, timeout: float = 20.0, *, anywhere: bool = False) -> re.Match[str]:
        """Wait until `pattern` (a regex) shows after the previous match (`anywhere`: since the start).

        Fails with what the terminal shows when it does not show within `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        compiled = re.compile(pattern)
        while True:
            text = self.text
            match = compiled.search(text, 0 if anywhere else self._mark)
            if match is not None:
                self._mark = match.end()
                return match
            if time.monotonic() > deadline or not self._pump(0.05):
                raise AssertionError(f"{pattern!r} did not show within {timeout}s; the terminal shows:\n{self.tail()}")

    def send(self, keys: str) -> None:
        """Type `keys` (\\r is Enter, \\x1b\\r a new line in the message, \\x03 Ctrl-C)."""
        os.write(self.fd, keys.encode())

    def line(self, text: str) -> None:
        """Type a message and press Enter (its lines joined by Alt-Enter)."""
        self.send(text.replace("\n", "\x1b\r") + "\r")

    def wait(self, timeout: float = 20.0) -> int:
        """Wait for the child to exit (reading what it prints meanwhile); its exit code."""
        deadline = time.monotonic() + timeout
        while self.returncode is None:
            if not self._pump(0.05):
                time.sleep(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout}s:\n{self.tail()}")
        return self.returncode

    def close(self) -> None:
        """Stop the child if it still runs and release the terminal."""
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.returncode = -signal.SIGKILL
        os.close(self.fd)
