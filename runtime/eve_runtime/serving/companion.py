"""What runs beside `eve dev`'s server in its event loop: the terminal UI (the companion)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

__all__ = ["Companion", "client_host"]

logger = logging.getLogger("eve.serve")


def client_host(host: str) -> str:
    """Where a client on this machine reaches a server listening on `host`."""
    if host in ("0.0.0.0", "", "::", "[::]"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class Companion:
    """Code run beside the server once it listens (the terminal UI); the server stops when it returns."""

    def __init__(self, run: Callable[[str], Awaitable[None]] | None) -> None:
        self._run = run
        self._task: asyncio.Task[None] | None = None
        self.done = asyncio.Event()
        self.url: str | None = None
        """The server's URL once it listens (the companion started then, if there is one)."""

    def start(self, url: str) -> None:
        self.url = url
        if self._run is None:
            return
        self._task = asyncio.ensure_future(self._run(url))
        self._task.add_done_callback(lambda _task: self.done.set())

    async def close(self) -> None:
        """Stop the companion if the server stopped first (a signal); report how it ended."""
        if self._task is None:
            return
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        except Exception:
            logger.exception("the terminal UI failed")
