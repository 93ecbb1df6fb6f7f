"""`AsyncSession` and `AsyncTurn`: the async twins of `Session` and `Turn`.

```python
from eve_runtime.client import AsyncEveClient

async with AsyncEveClient("http://127.0.0.1:2000") as eve:
    session = eve.session()
    async for delta in session.send("/say Hello there.").text():
        print(delta, end="", flush=True)
```

`send()` (and `respond`, `approve`, `deny`) return the turn at once; its message goes out when
the turn is first awaited or iterated (`turn = await session.send(...)` sends it right away and
raises there if the server refuses it). A turn that is never awaited nor iterated sends nothing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Mapping, Sequence
from typing import Any

from eve_runtime.client._protocol import StreamCursor
from eve_runtime.client.events import MessageAppended, StreamEvent, parse_event
from eve_runtime.client.parts import Event, InputRequest, Usage
from eve_runtime.client.ports import AsyncSessionClient
from eve_runtime.client.result import TurnResult, TurnWatch
from eve_runtime.client.session import answer_of

__all__ = ["AsyncSession", "AsyncTurn"]

Start = Callable[[], Awaitable[tuple[str, int, str | None]]]
"""Sends the turn's message: the session id, where its events start, and the delivery id."""


class AsyncTurn:
    """One turn of a session as it streams, read with `async for` (see [`Turn`][eve_runtime.client.Turn])."""

    def __init__(self, client: AsyncSessionClient, start: Start) -> None:
        self._client = client
        self._start: Start | None = start
        self._watch: TurnWatch | None = None
        self._cursor: StreamCursor | None = None
        self._reader: AsyncGenerator[Event, None] | None = None
        self._result: TurnResult | None = None
        self.session_id: str | None = None
        self.delivery_id: str | None = None

    async def _started(self) -> tuple[TurnWatch, StreamCursor]:
        if self._start is not None:
            start, self._start = self._start, None
            self.session_id, index, self.delivery_id = await start()
            self._watch = TurnWatch(self.session_id, delivery_id=self.delivery_id)
            self._cursor = StreamCursor(
                self.session_id, index, follow=True, max_reconnects=self._client._max_reconnects
            )
        assert self._watch is not None and self._cursor is not None, "the turn's message could not be sent"
        return self._watch, self._cursor

    def __await__(self) -> Generator[Any, None, AsyncTurn]:
        """Send the turn's message now (if it was not sent yet); the turn."""

        async def started() -> AsyncTurn:
            await self._started()
            return self

        return started().__await__()

    @property
    def done(self) -> bool:
        """Whether the turn reached its boundary (or the stream ended)."""
        return self._result is not None

    @property
    def usage(self) -> Usage:
        """The tokens (and cost) of this turn's model calls read so far."""
        return self._watch.turn_usage if self._watch is not None else Usage()

    async def __aiter__(self) -> AsyncIterator[StreamEvent]:
        watch, cursor = await self._started()
        while self._result is None:
            if self._reader is None:
                self._reader = self._client._read(cursor)
            raw = await anext(self._reader, None)
            if raw is None:  # the session ended: nothing more will come
                await self._finish(watch, cursor)
                return
            if watch.push(raw):
                await self._finish(watch, cursor)
            if watch.armed:  # the end of a turn that was running when the message went in is not this turn
                yield parse_event(raw)

    async def text(self) -> AsyncIterator[str]:
        """The assistant's text as it streams (`message.appended` deltas), until the turn ends."""
        async for event in self:
            if isinstance(event, MessageAppended) and event.delta:
                yield event.delta

    async def result(self) -> TurnResult:
        """Read to the turn's end; how it ended, its reply, the requests it waits on, its usage."""
        async for _ in self:
            pass
        assert self._result is not None
        return self._result

    async def aclose(self) -> None:
        """Stop reading (the turn itself goes on in the server)."""
        if self._reader is not None:
            reader, self._reader = self._reader, None
            await reader.aclose()

    async def __aenter__(self) -> AsyncTurn:
        return await self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _finish(self, watch: TurnWatch, cursor: StreamCursor) -> None:
        self._result = watch.result(cursor.index)
        await self.aclose()


class AsyncSession:
    """One session of a server, from [`AsyncEveClient.session()`][eve_runtime.client.AsyncEveClient.session]."""

    def __init__(self, client: AsyncSessionClient, session_id: str | None = None) -> None:
        self.client = client
        self.id = session_id

    def _require(self) -> str:
        if self.id is None:
            raise ValueError("the session does not exist yet: send() its first message")
        return self.id

    def send(
        self,
        message: str | Sequence[Mapping[str, Any]],
        *,
        turn_policy: str | None = None,
        idempotency_key: str | None = None,
        client_context: Any = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> AsyncTurn:
        """The turn that takes a message (creating the session the first time); sent once awaited or iterated."""
        options = {
            "turn_policy": turn_policy,
            "idempotency_key": idempotency_key,
            "client_context": client_context,
            "output_schema": dict(output_schema) if output_schema is not None else None,
        }

        async def start() -> tuple[str, int, str | None]:
            if self.id is None:
                self.id = await self.client.create(message, **options)
                return self.id, 0, None
            index = await self.client.event_count(self.id)
            return self.id, index, await self.client.send(self.id, message, **options)

        return AsyncTurn(self.client, start)

    def respond(self, responses: Sequence[Mapping[str, Any]]) -> AsyncTurn:
        """Answer requests for input; the turn that goes on (the answer goes out when awaited or iterated)."""
        session_id = self._require()

        async def start() -> tuple[str, int, str | None]:
            index = await self.client.event_count(session_id)
            await self.client.respond(session_id, responses)
            return session_id, index, None

        return AsyncTurn(self.client, start)

    def approve(self, request: InputRequest | str) -> AsyncTurn:
        """Approve a tool call waiting for approval; the turn that goes on."""
        return self.respond([answer_of(request, "approve")])

    def deny(self, request: InputRequest | str) -> AsyncTurn:
        """Refuse a tool call waiting for approval (eve's `cancel` option); the turn that goes on."""
        return self.respond([answer_of(request, "cancel")])

    async def cancel(self) -> str:
        """Cancel the running turn: `accepted` or `no_active_turn`."""
        return await self.client.cancel(self._require())

    async def reset(self) -> str:
        """Retire the session for good: `reset` or `no_active_session`."""
        return await self.client.reset(self._require())

    async def events(self) -> list[StreamEvent]:
        """The session's events so far, typed (each keeps its dict as `.raw`)."""
        return [parse_event(event) for event in await self.client.events(self._require())]
