"""Calling an app's own functions from the event loop (hooks, channel handlers, `deliver`, `metadata`).

A plain function runs on the runtime's tool threads, so one that blocks (a network call, a
`time.sleep`) never freezes the server and a timeout around it can fire (the thread itself
cannot be stopped: it is no longer waited for). An `async` function, or an object with an
`async __call__`, runs on the loop. Whatever either returns is awaited when it is awaitable.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

__all__ = ["call_user"]


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (an object with an async __call__)
    )


async def call_user(executor: Executor | None, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, awaited: on `executor`'s threads (the loop's default one when None) unless it is async."""
    if _is_async(fn):
        result = fn(*args)
    else:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(executor, contextvars.copy_context().run, fn, *args)
    if inspect.isawaitable(result):
        result = await result
    return result
