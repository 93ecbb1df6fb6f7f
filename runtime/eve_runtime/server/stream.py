r"""`GET /eve/v1/session/:id/stream`: a session's events as NDJSON, straight from the store.

The body opens with a single `\n`, then carries one stored line per event, byte for byte as the
store keeps it (events are serialized once, when written). A bounded read (`follow=false`, or
`includeTailIndex`) stops at the tail seen when the response opens and reports it in
`x-eve-stream-tail-index`. A live follow catches up, then waits on the store for new events, and
ends after `session.completed` / `session.failed`. With `streamControlVersion=1` a quiet stream
gets a blank line every `heartbeat_interval` seconds and, after `lease_duration` seconds,
`{"$eve":"stream.lease-ended","version":1}` before the server closes it (the client reconnects
from its cursor). A stream whose store read fails (an unreachable database, a failing disk) ends
with `{"$eve":"stream.interrupted","version":1,"code":"store_unavailable"}` (`"internal_error"`
for anything else) instead of looking like a normal end: the client reconnects from its cursor
after a pause. Readers never touch the session's actor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import uuid
from collections.abc import AsyncGenerator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import anyio
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from eve_runtime.events.catalog import STREAM_VERSION
from eve_runtime.ids import is_session_id
from eve_runtime.server.responses import ApiError
from eve_runtime.store.base import Store, StoreError

__all__ = [
    "INTERRUPTED",
    "LEASE_ENDED",
    "NDJSON_TYPE",
    "STREAM_VERSION",
    "TERMINAL_EVENTS",
    "NdjsonResponse",
    "StreamOptions",
    "StreamQuery",
    "StreamRegistry",
    "open_stream",
    "parse_stream_query",
]

logger = logging.getLogger("eve.server")

NDJSON_TYPE = "application/x-ndjson; charset=utf-8"
TERMINAL_EVENTS = frozenset({"session.completed", "session.failed"})
LEASE_ENDED = b'{"$eve":"stream.lease-ended","version":1}\n'
INTERRUPTED = b'{"$eve":"stream.interrupted","version":1,"code":"store_unavailable"}\n'
_INTERRUPTED_BY_A_BUG = b'{"$eve":"stream.interrupted","version":1,"code":"internal_error"}\n'
SESSION_NOT_FOUND = "Session not found."
BAD_START_INDEX = "Expected startIndex to be an integer."

_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)
_MAX_DIGITS = 30
"""Longer start indexes are clamped (no store holds 10**30 events) instead of parsed."""
MAX_INDEX = 2**63 - 1
"""The largest position a store can hold (a signed 64-bit integer in SQLite and Postgres)."""
_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
BAD_FLAG = "Expected '{name}' to be 'true' or 'false' (or '1' / '0'), not {value!r}."
BAD_CONTROL_VERSION = "Expected 'streamControlVersion' to be 1 (the only stream control version served), not {value!r}."


@dataclass(frozen=True)
class StreamOptions:
    """Timing of live follows (tests shorten them)."""

    heartbeat_interval: float = 10.0
    """Seconds of quiet before a blank heartbeat line (with `streamControlVersion=1`)."""
    lease_duration: float = 60.0
    """Seconds after which a leased follow ends with `stream.lease-ended`."""
    idle_check: float = 30.0
    """How often a quiet follow without leases re-checks that its session is still active."""
    batch_size: int = 2048
    """Events read from the store at a time."""


@dataclass(frozen=True)
class StreamQuery:
    """The parsed query of a stream request."""

    start_index: int = 0
    """Absolute (>= 0) or relative to the tail (< 0)."""
    follow: bool = True
    include_tail_index: bool = False
    leases: bool = False


def _flag(params: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean query flag: `true`/`1`/`yes` or `false`/`0`/`no` (any case); absent or empty is `default`."""
    raw = params.get(name)
    value = "" if raw is None else raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value == "":
        return default
    raise ApiError(400, BAD_FLAG.format(name=name, value=(raw or "")[:40]), "invalid_query")


def parse_stream_query(params: Mapping[str, str]) -> StreamQuery:
    """Parse `startIndex`, `follow`, `includeTailIndex` and `streamControlVersion`.

    Raises:
        ApiError: 400 when `startIndex` is not a decimal integer (`-0` is one; `+1`, ` 1`, `1e2`,
            `1.5`, `0x10` and the empty string are not), when `follow` or `includeTailIndex` is
            not a boolean word, or when `streamControlVersion` is neither absent, empty nor `1`.
    """
    start = 0
    raw = params.get("startIndex")
    if raw is not None:
        if not _INTEGER.fullmatch(raw):
            raise ApiError(400, BAD_START_INDEX)
        digits = raw.lstrip("-").lstrip("0") or "0"
        magnitude = int(digits) if len(digits) <= _MAX_DIGITS else 10**_MAX_DIGITS
        start = -magnitude if raw.startswith("-") else magnitude
    control = params.get("streamControlVersion", "").strip()
    if control not in ("", "1"):
        raise ApiError(400, BAD_CONTROL_VERSION.format(value=control[:40]), "invalid_query")
    return StreamQuery(
        start_index=start,
        follow=_flag(params, "follow", True),
        include_tail_index=_flag(params, "includeTailIndex", False),
        leases=control == "1",
    )


class StreamRegistry:
    """The live streams of one app, so a server shutting down can end them all at once."""

    def __init__(self) -> None:
        self._scopes: set[anyio.CancelScope] = set()
        self._closed = False

    @contextmanager
    def track(self) -> Iterator[anyio.CancelScope]:
        """A cancel scope for one stream body, cancelled by `close_all`."""
        scope = anyio.CancelScope()
        if self._closed:
            scope.cancel()
        self._scopes.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._scopes.discard(scope)

    def close_all(self) -> None:
        """End every stream (each ends its response cleanly) and every stream opened from now on."""
        self._closed = True
        for scope in list(self._scopes):
            scope.cancel()

    def __len__(self) -> int:
        return len(self._scopes)


class _ClientGone(Exception):
    """Writing to the client failed: it went away."""


async def _send(send: Send, message: Message) -> None:
    try:
        await send(message)
    except OSError as exc:
        raise _ClientGone from exc


class NdjsonResponse(Response):
    """A streaming response that ends promptly when the client goes away or the server shuts down."""

    def __init__(self, body: AsyncGenerator[bytes, None], headers: Mapping[str, str], registry: StreamRegistry) -> None:
        self.status_code = 200
        self.background = None
        self.body_iterator = body
        self.registry = registry
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        end: Message = {"type": "http.response.body", "body": b"", "more_body": False}
        async with anyio.create_task_group() as group:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch_disconnect)
            try:
                await _send(
                    send, {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
                )
                with self.registry.track():
                    try:
                        async for chunk in self.body_iterator:
                            await _send(send, {"type": "http.response.body", "body": chunk, "more_body": True})
                    finally:
                        with anyio.CancelScope(shield=True):
                            await self.body_iterator.aclose()
                await _send(send, end)
            except _ClientGone:
                pass
            except Exception as exc:  # a failing store must not kill the server: say so, end, log why
                if isinstance(exc, StoreError):
                    logger.warning("stream interrupted: the store failed: %s", exc)
                else:
                    logger.exception("stream failed (errorId %s)", uuid.uuid4().hex)
                record = INTERRUPTED if isinstance(exc, StoreError) else _INTERRUPTED_BY_A_BUG
                with contextlib.suppress(_ClientGone):
                    await _send(send, {"type": "http.response.body", "body": record, "more_body": True})
                    await _send(send, end)
            group.cancel_scope.cancel()


async def open_stream(
    store: Store,
    session_id: str,
    query: StreamQuery,
    options: StreamOptions,
    registry: StreamRegistry,
) -> NdjsonResponse:
    """The stream response of a session (see the module docstring).

    Raises:
        ApiError: 404 `Session not found.` for an unknown (or malformed) session id.
    """
    session = await store.get_session(session_id) if is_session_id(session_id) else None
    if session is None:
        raise ApiError(404, SESSION_NOT_FOUND)
    count = await store.event_count(session_id)
    # Clamped to what a store can address: past the tail a bounded read has nothing to send, and a
    # follow waits for that position (no store reaches MAX_INDEX).
    start = min(query.start_index, MAX_INDEX) if query.start_index >= 0 else max(0, count + query.start_index)
    headers = {
        "content-type": NDJSON_TYPE,
        "cache-control": "no-store, no-transform",
        "x-accel-buffering": "no",
        "x-eve-session-id": session_id,
        "x-eve-stream-format": "ndjson",
        "x-eve-stream-version": str(STREAM_VERSION),
    }
    bounded = not query.follow or query.include_tail_index
    if bounded:
        headers["x-eve-stream-tail-index"] = str(count - 1)
        body = _bounded(store, session_id, min(start, count), count, options.batch_size)
    else:
        body = _Follow(store, session_id, options, leases=query.leases).run(start, count)
    return NdjsonResponse(body, headers, registry)


async def _bounded(store: Store, session_id: str, start: int, end: int, batch: int) -> AsyncGenerator[bytes, None]:
    yield b"\n"
    cursor = start
    # Read the next chunk while the current one is being sent.
    upcoming = asyncio.ensure_future(store.read_chunk(session_id, cursor, min(end, cursor + batch)))
    try:
        while True:
            chunk = await upcoming
            if not chunk.count:
                return
            cursor += chunk.count
            if cursor < end:
                upcoming = asyncio.ensure_future(store.read_chunk(session_id, cursor, min(end, cursor + batch)))
            yield chunk.body
            if cursor >= end:
                return
    finally:
        if not upcoming.done():
            upcoming.cancel()
        elif not upcoming.cancelled():
            upcoming.exception()  # a read-ahead that failed after the client left: retrieved, not logged


class _Follow:
    """One live follow: catch up, wait, repeat; heartbeats and the lease when asked for."""

    def __init__(self, store: Store, session_id: str, options: StreamOptions, *, leases: bool) -> None:
        self.store = store
        self.session_id = session_id
        self.options = options
        self.leases = leases

    async def _ended(self, cursor: int) -> tuple[bool, int]:
        """Whether the session ended with nothing left past `cursor`; and the event count now."""
        session = await self.store.get_session(self.session_id)
        count = await self.store.event_count(self.session_id)
        return (session is None or session.status != "active") and cursor >= count, count

    async def run(self, start: int, known: int) -> AsyncGenerator[bytes, None]:
        options = self.options
        yield b"\n"
        now = anyio.current_time()
        lease_end = now + options.lease_duration
        next_beat = now + options.heartbeat_interval
        cursor = start
        while True:
            progressed = False
            while cursor < known:
                end = min(known, cursor + options.batch_size)
                chunk = await self.store.read_chunk(self.session_id, cursor, end, TERMINAL_EVENTS)
                if not chunk.count:
                    break
                yield chunk.body
                if chunk.stopped:
                    return
                cursor += chunk.count
                progressed = True
                now = anyio.current_time()
                next_beat = now + options.heartbeat_interval
                if self.leases and now >= lease_end:
                    yield LEASE_ENDED
                    return
            if not progressed:
                # Nothing new to read: the session may have ended before the cursor (or without a
                # terminal event); its status and its last events are written by one commit.
                ended, known = await self._ended(cursor)
                if ended:
                    return
                if cursor < known:
                    continue
            if self.leases:
                timeout = max(0.0, min(next_beat, lease_end) - anyio.current_time())
            else:
                timeout = options.idle_check
            count = await self.store.wait_for_events(self.session_id, known, timeout)
            if count > known:
                known = count
                continue
            if self.leases:
                now = anyio.current_time()
                if now >= lease_end:
                    yield LEASE_ENDED
                    return
                if now >= next_beat:
                    yield b"\n"
                    next_beat = now + options.heartbeat_interval
