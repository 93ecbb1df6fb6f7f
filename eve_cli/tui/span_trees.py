"""`eve dev --trace` beside the terminal UI: each turn's span tree, printed above the prompt.

The server (in this process) logs each tree through logger `eve.trace` from its telemetry
thread; this handler hands the lines to the UI's loop, which prints them dim, as notes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from rich.markup import escape

__all__ = ["TREES", "TreePrinter"]

TREES = "eve.trace"
"""The logger the runtime prints turn trees to (`eve_runtime.telemetry.server`)."""


class TreePrinter(logging.Handler):
    """Prints the records of `eve.trace` through `say` (rich markup lines) on `loop`."""

    def __init__(self, say: Callable[..., None], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.INFO)
        self.say = say
        self.loop = loop
        self._level = logging.NOTSET

    def emit(self, record: logging.LogRecord) -> None:
        lines = [f"[dim]{escape(line)}[/]" for line in record.getMessage().splitlines()]
        try:
            self.loop.call_soon_threadsafe(lambda: self.say(*lines))
        except RuntimeError:  # the UI's loop closed: the tree stays in the log file
            pass

    def __enter__(self) -> TreePrinter:
        logger = logging.getLogger(TREES)
        self._level = logger.level
        if not logger.isEnabledFor(logging.INFO):  # the trees are INFO records: they must not be filtered out
            logger.setLevel(logging.INFO)
        logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logger = logging.getLogger(TREES)
        logger.removeHandler(self)
        logger.setLevel(self._level)
