"""One live MCP client session (stdio or streamable HTTP) through the official `mcp` SDK.

The SDK's transports are anyio context managers that must be entered and left by one task, so
each link owns a background task holding them open; requests are sent from any task of the loop.
The link notices when its server goes away: the stdio process exits, or an HTTP server restarts
and no longer knows the session (404, "Session terminated"). A request the server never received
(the link was already dead, or the server refused the old session) is sent again once on a
fresh link; a request that may have reached the server is never sent again: it fails, and the
next request reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any, TypeVar

import anyio
import httpx
from mcp import ClientSession, McpError, StdioServerParameters, types as mcp_types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from eve_runtime.authoring.connections import McpClientConnection

__all__ = ["LinkError", "McpLink"]

logger = logging.getLogger("eve.connections")

T = TypeVar("T")

CONNECT_TIMEOUT = 20.0
_NOT_DELIVERED = ("Session terminated",)
"""Errors meaning the server rejected the request without running it (a restarted HTTP server)."""
_CLOSED = ("Connection closed",)


class LinkError(Exception):
    """The server could not be reached, or the link broke; `delivered` says whether the request may have run."""

    def __init__(self, message: str, *, delivered: bool) -> None:
        super().__init__(message)
        self.delivered = delivered


class McpLink:
    """A client session to one MCP server, opened at first use and reopened after the server goes away."""

    def __init__(
        self,
        definition: McpClientConnection,
        *,
        headers: dict[str, str],
        environment: dict[str, str],
        cwd: str | None,
        on_tools_changed: Callable[[], None],
        auth: httpx.Auth | None = None,
    ) -> None:
        self.definition = definition
        self.auth = auth
        self.headers = headers
        self.environment = environment
        self.cwd = cwd
        self.on_tools_changed = on_tools_changed
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._broken = False

    @property
    def alive(self) -> bool:
        return self._session is not None and not self._broken and self._owner is not None and not self._owner.done()

    async def _open(self) -> ClientSession:
        async with self._lock:
            if self.alive:
                assert self._session is not None
                return self._session
            await self._close_owner()
            ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._broken = False
            self._owner = asyncio.create_task(self._hold(ready, self._stop), name="eve-mcp-link")
            try:
                self._session = await asyncio.wait_for(asyncio.shield(ready), CONNECT_TIMEOUT)
            except TimeoutError:
                await self._close_owner()
                raise LinkError(
                    f"the MCP server did not finish the handshake within {CONNECT_TIMEOUT:.0f} s", delivered=False
                ) from None
            except LinkError:
                await self._close_owner()
                raise
            return self._session

    async def _transport(self, stack: AsyncExitStack) -> Any:
        definition = self.definition
        if definition.url is not None:
            timeout = httpx.Timeout(definition.timeout, read=max(definition.timeout, 300.0))
            client = await stack.enter_async_context(
                create_mcp_http_client(headers=self.headers, timeout=timeout, auth=self.auth)
            )
            return streamable_http_client(definition.url, http_client=client)
        program, *args = definition.command
        base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "SYSTEMROOT") if key in os.environ}
        parameters = StdioServerParameters(command=program, args=args, env={**base, **self.environment}, cwd=self.cwd)
        return stdio_client(parameters, errlog=_server_log())

    async def _hold(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write, *_ = await stack.enter_async_context(await self._transport(stack))
                session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._on_message))
                await session.initialize()
                if not ready.done():
                    ready.set_result(session)
                await stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the transport's task group reports failures as exception groups
            self._broken = True
            if not ready.done():
                ready.set_exception(LinkError(_describe(exc, self.definition), delivered=False))
            else:
                logger.info("MCP link closed: %s", _describe(exc, self.definition))
        finally:
            self._broken = True

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ServerNotification) and isinstance(
            message.root, mcp_types.ToolListChangedNotification
        ):
            self.on_tools_changed()
        elif isinstance(message, Exception):
            logger.info("MCP transport error: %s", message)

    async def request(self, operation: Callable[[ClientSession], Awaitable[T]]) -> T:
        """Run one request on the session; reconnect and send it again once if the server never got it."""
        for attempt in range(2):
            session = await self._open()
            try:
                return await self._run(operation, session)
            except TimeoutError:
                raise LinkError(
                    f"the MCP server did not answer within {self.definition.timeout:g} s", delivered=True
                ) from None
            except McpError as exc:
                message = exc.error.message
                if message in _NOT_DELIVERED or message in _CLOSED:
                    self._broken = True
                    if message in _NOT_DELIVERED and attempt == 0:
                        continue
                    raise LinkError(f"the MCP server went away ({message})", delivered=message in _CLOSED) from None
                raise
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                self._broken = True  # the write side was already closed: nothing went out
                if attempt == 0:
                    continue
                raise LinkError("the MCP server closed the connection", delivered=False) from None
        raise AssertionError("unreachable")

    async def _run(self, operation: Callable[[ClientSession], Awaitable[T]], session: ClientSession) -> T:
        """The operation within the timeout; it fails at once when the link dies under it.

        (A transport that fails, such as an OAuth refusal inside the HTTP client, leaves the
        session's pending requests unanswered: without this they would wait for their timeout.)
        """
        owner = self._owner
        task: asyncio.Future[T] = asyncio.ensure_future(operation(session))
        watched: set[asyncio.Future[Any]] = {task} if owner is None else {task, owner}
        try:
            done, _ = await asyncio.wait(watched, timeout=self.definition.timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
        if task in done:
            return task.result()
        with contextlib.suppress(BaseException):
            await task
        if owner is not None and owner in done:
            self._broken = True
            raise LinkError("the link to the MCP server broke during the request", delivered=True)
        raise TimeoutError

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server offers (following pagination)."""

        async def page_through(session: ClientSession) -> list[mcp_types.Tool]:
            tools: list[mcp_types.Tool] = []
            cursor: str | None = None
            while True:
                result = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                tools.extend(result.tools)
                cursor = result.nextCursor
                if not cursor:
                    return tools

        return await self.request(page_through)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call one tool. Never sent twice unless the server is known not to have received it."""
        timeout = timedelta(seconds=self.definition.timeout)
        return await self.request(lambda session: session.call_tool(name, arguments, read_timeout_seconds=timeout))

    async def _close_owner(self) -> None:
        owner, stop = self._owner, self._stop
        self._owner = self._stop = None
        self._session = None
        if owner is None:
            return
        if stop is not None:
            stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), 5)
        except (TimeoutError, Exception):
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner

    async def close(self) -> None:
        """Close the session (a stdio server is stopped)."""
        async with self._lock:
            await self._close_owner()


_DEVNULL: list[Any] = []


def _server_log() -> Any:
    """Where a stdio server's stderr goes: the process's own stderr, else nowhere.

    The SDK's default is whatever `sys.stderr` was when it was imported, which a test runner or a
    terminal UI may have swapped for a stream without a file descriptor.
    """
    stream = sys.__stderr__
    try:
        if stream is not None:
            stream.fileno()
            return stream
    except (OSError, ValueError, AttributeError):
        pass
    if not _DEVNULL:
        _DEVNULL.append(open(os.devnull, "w"))  # one for the process: every stdio server may share it
    return _DEVNULL[0]


def _describe(exc: BaseException, definition: McpClientConnection) -> str:
    leaves = list(_leaves(exc))
    first = leaves[0] if leaves else exc
    # What the model may read too: never the URL or the command line (eve connections test shows them).
    if isinstance(first, httpx.ConnectError):
        return "cannot connect to the MCP server: is the MCP server running?"
    if isinstance(first, httpx.TimeoutException):
        return "the MCP server did not answer in time"
    if isinstance(first, httpx.HTTPStatusError):
        status = first.response.status_code
        hint = " (check the connection's auth and headers)" if status in (401, 403) else ""
        return f"the MCP server answered HTTP {status}{hint}"
    if isinstance(first, FileNotFoundError):
        return "cannot start the MCP server: no such program (check command=)"
    if isinstance(first, McpError):
        return f"the MCP server refused: {first.error.message}"
    if definition.url is None and isinstance(first, (anyio.EndOfStream, anyio.ClosedResourceError, EOFError)):
        return "the stdio MCP server exited before the handshake (run its command by hand to see why)"
    return f"{type(first).__name__} talking to the MCP server"


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        found: list[BaseException] = []
        for inner in exc.exceptions:
            found.extend(_leaves(inner))
        return found
    return [exc]
