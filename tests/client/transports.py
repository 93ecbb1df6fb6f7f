"""httpx transports for the stream tests: a real connection whose stream bodies are cut short.

`CuttingTransport` (and its async twin) forwards every request to the real server but ends each
stream response after a few event lines, in the middle of the next line: by raising a read
error (a dropped connection) or by ending the body early (a proxy that gave up). The client must
resume from its cursor without losing or repeating an event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Literal

import httpx

__all__ = ["AsyncCuttingTransport", "CuttingTransport"]

How = Literal["error", "end"]


class _Cut:
    """Counts the lines of a body and says how much of a chunk may still pass."""

    def __init__(self, lines: int) -> None:
        self.left = lines + 1  # the opening newline is a line too

    def take(self, chunk: bytes) -> tuple[bytes, bool]:
        """The part of `chunk` to pass on, and whether the body is cut there."""
        passed = bytearray()
        for byte in chunk:
            if self.left == 0:
                return bytes(passed) + b'{"type": "half a li', True  # a partial line, then the cut
            passed.append(byte)
            if byte == 0x0A:
                self.left -= 1
        return bytes(passed), False


class _CutBody(httpx.SyncByteStream):
    def __init__(self, inner: httpx.Response, lines: int, how: How) -> None:
        self.inner, self.cut, self.how = inner, _Cut(lines), how

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner.iter_raw():
            passed, cut = self.cut.take(chunk)
            if passed:
                yield passed
            if cut:
                self.inner.close()
                if self.how == "error":
                    raise httpx.ReadError("the test cut the connection")
                return

    def close(self) -> None:
        self.inner.close()


class _AsyncCutBody(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.Response, lines: int, how: How) -> None:
        self.inner, self.cut, self.how = inner, _Cut(lines), how

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner.aiter_raw():
            passed, cut = self.cut.take(chunk)
            if passed:
                yield passed
            if cut:
                await self.inner.aclose()
                if self.how == "error":
                    raise httpx.ReadError("the test cut the connection")
                return

    async def aclose(self) -> None:
        await self.inner.aclose()


def _is_stream(request: httpx.Request) -> bool:
    return request.url.path.endswith("/stream") and request.url.params.get("startIndex") != "-1"  # not a tail probe


class CuttingTransport(httpx.BaseTransport):
    """The real network, with every stream response cut after `lines` lines."""

    def __init__(self, lines: int, how: How = "error") -> None:
        self.inner = httpx.HTTPTransport()
        self.lines, self.how = lines, how
        self.stream_requests: list[httpx.URL] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if not _is_stream(request) or response.status_code != 200:
            return response
        self.stream_requests.append(request.url)
        return httpx.Response(
            response.status_code, headers=response.headers, stream=_CutBody(response, self.lines, self.how)
        )

    def close(self) -> None:
        self.inner.close()


class AsyncCuttingTransport(httpx.AsyncBaseTransport):
    """The async twin of [`CuttingTransport`][tests.client.transports.CuttingTransport]."""

    def __init__(self, lines: int, how: How = "error") -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lines, self.how = lines, how
        self.stream_requests: list[httpx.URL] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if not _is_stream(request) or response.status_code != 200:
            return response
        self.stream_requests.append(request.url)
        return httpx.Response(
            response.status_code, headers=response.headers, stream=_AsyncCutBody(response, self.lines, self.how)
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
