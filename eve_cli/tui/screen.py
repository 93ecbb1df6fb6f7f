"""The terminal side of the UI: a prompt_toolkit prompt with the transcript printed above it.

Why prompt_toolkit with rich rather than a full-screen framework: the transcript stays ordinary
terminal output (scrollback, copy and paste, search all work as in any shell), the prompt keeps
accepting input while a turn streams above it (that is how Enter steers), and both libraries
import in a fraction of a second. rich renders the transcript's markup to ANSI text; prompt_toolkit
prints it above the prompt and redraws the prompt, whose top lines (the status) show the reply line
still streaming and what the turn is doing.

The status is drawn only while the prompt is live: when Enter accepts a line, prompt_toolkit draws
the prompt one last time and leaves that drawing in the scrollback, so that last drawing is the
input line alone (the status would freeze into the transcript there, after an answer or a steer).

Keys: Enter sends, Alt-Enter (or Esc then Enter) starts a new line, Ctrl-C (or Esc) cancels a running
turn, Ctrl-C twice when idle (or Ctrl-D) quits, Up/Down walk the input history.
"""

from __future__ import annotations

import io
import shutil
import sys
import time
from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none, run_in_terminal
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import ColorDepth
from rich.console import Console

__all__ = ["Screen"]

_QUIT_WINDOW = 2.0
"""Seconds within which a second Ctrl-C on an idle prompt quits."""


class Screen:
    """Reads lines from the person and prints transcript lines above the prompt.

    Args:
        status: The lines above the input line (the live reply line, the activity), as ANSI text;
            redrawn several times a second, never left in the transcript.
        prompt: The start of the input line (`› `), as ANSI text.
        toolbar: The bottom line (model, session, server), as ANSI text.
        busy: Whether Ctrl-C should cancel a turn rather than count towards quitting.
        cancel: Called on Ctrl-C or Esc while `busy()`.
    """

    def __init__(
        self,
        *,
        status: Callable[[], list[str]],
        prompt: Callable[[], str],
        toolbar: Callable[[], str],
        busy: Callable[[], bool],
        cancel: Callable[[], None],
    ) -> None:
        self._busy = busy
        self._status = status
        self._prompt = prompt
        self._cancel = cancel
        self._last_interrupt = 0.0
        self._console = Console(file=io.StringIO(), force_terminal=True, highlight=False, emoji=False, soft_wrap=False)
        self._session: PromptSession[str] = PromptSession(
            message=lambda: ANSI(self.message()),
            bottom_toolbar=lambda: ANSI(toolbar()),
            history=InMemoryHistory(),
            key_bindings=self._keys(),
            refresh_interval=0.25,
            color_depth=ColorDepth.DEPTH_8_BIT,
            erase_when_done=False,
        )

    def message(self) -> str:
        """The prompt's text: the status lines and the input line's start (only the latter once accepted)."""
        app = get_app_or_none()
        if app is not None and app.is_done:
            return self._prompt()
        return "\n".join([*self._status(), self._prompt()])

    def _keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            buffer = event.app.current_buffer
            if self._busy():
                self._cancel()
            elif buffer.text:
                buffer.reset()
            elif time.monotonic() - self._last_interrupt < _QUIT_WINDOW:
                event.app.exit(result=None)
            else:
                self._last_interrupt = time.monotonic()
                self.print(["[dim]Press Ctrl-C again to quit (or type /quit).[/]"])

        @keys.add("escape", eager=False)
        def _escape(event: KeyPressEvent) -> None:
            if self._busy():
                self._cancel()

        @keys.add("c-d")
        def _end(event: KeyPressEvent) -> None:
            if not event.app.current_buffer.text:
                event.app.exit(result=None)

        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.app.current_buffer.insert_text("\n")

        @keys.add("c-j")
        def _send(event: KeyPressEvent) -> None:
            # Enter typed while a line prints above the prompt reaches us as Ctrl-J (the terminal is
            # briefly in cooked mode, which turns CR into LF): it still sends.
            event.app.current_buffer.validate_and_handle()

        return keys

    async def read(self) -> str | None:
        """The next line the person enters; None when they quit (Ctrl-D, or Ctrl-C twice)."""
        try:
            line: str | None = await self._session.prompt_async()
        except (EOFError, KeyboardInterrupt):
            return None
        return line

    async def read_secret(self) -> str | None:
        """A line typed without echo (a provider key): never kept in the input history."""
        try:
            secret: str = await PromptSession[str]().prompt_async("key: ", is_password=True)
        except (EOFError, KeyboardInterrupt):
            return None
        return secret

    def render(self, lines: list[str]) -> str:
        """Rich markup lines as ANSI text, wrapped to the terminal's width."""
        self._console.width = shutil.get_terminal_size().columns
        with self._console.capture() as capture:
            for line in lines:
                self._console.print(line)
        return capture.get()

    def print(self, lines: list[str]) -> None:
        """Print transcript lines (rich markup) above the prompt."""
        if not lines:
            return
        text = self.render(lines)

        def write() -> None:
            sys.stdout.write(text)
            sys.stdout.flush()

        if get_app_or_none() is None:
            write()
        else:
            run_in_terminal(write, in_executor=False)

    def refresh(self) -> None:
        """Redraw the prompt now (the live line or the activity changed)."""
        app = get_app_or_none()
        if app is not None:
            app.invalidate()
