"""The event loop a serving process runs on: uvloop where it is installed, else asyncio's own.

uvloop (libuv under asyncio's interface) costs a session's step less than asyncio's selector
loop: measured here with `bench/step_overhead.py`, about a sixth less CPU per step, and a hand-off
from the store's writer thread back to the loop (`call_soon_threadsafe`) wakes it sooner, which
halves a step's wall time on a loaded machine. Everything eve runs on the loop (uvicorn, psycopg,
the MCP SDK through anyio, subprocesses) works on both. It is a dependency on Linux and macOS;
elsewhere, or with `EVE_EVENT_LOOP=asyncio`, the standard loop runs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOP_ENV", "loop_factory", "run"]

T = TypeVar("T")

EVENT_LOOP_ENV = "EVE_EVENT_LOOP"
"""`asyncio` runs the standard loop even where uvloop is installed (to compare, or to rule it out)."""


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """What makes the serving loop: uvloop's, unless it is missing or `EVE_EVENT_LOOP=asyncio`."""
    if os.environ.get(EVENT_LOOP_ENV, "").strip().lower() != "asyncio":
        try:
            import uvloop
        except ImportError:  # not installed on this platform: the standard loop serves as well, slower
            pass
        else:
            return uvloop.new_event_loop
    return asyncio.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion on a new serving loop (as `asyncio.run` does on a standard one)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
