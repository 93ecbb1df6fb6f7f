"""`AsyncEveClient`: the `/eve/v1` API from async code (asyncio or trio), over httpx.

The same methods as [`EveClient`][eve_runtime.client.EveClient], awaited; `stream()` is an async
iterator:

```python
async with AsyncEveClient("http://127.0.0.1:2000") as eve:
    async for delta in eve.session().send("hello").text():  # one turn, as it streams
        print(delta, end="")

    session_id = await eve.create("hello")  # or the API's calls one by one
    async for event in eve.stream(session_id):
        print(event["type"])
        if event["type"] == "session.waiting":
            break
```
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import httpx

from eve_runtime.client._protocol import (
    API,
    NOT_READY,
    STORE_UNAVAILABLE,
    Backoff,
    StreamCursor,
    camel_fields,
    decode_answer,
    describe,
    message_body,
    probe_ended,
    schedule_path,
    session_path,
)
from eve_runtime.client.async_session import AsyncSession
from eve_runtime.client.errors import ResponseError, ServerUnreachable
from eve_runtime.client.parts import Event
from eve_runtime.client.result import TurnResult, TurnWatch

__all__ = ["AsyncEveClient"]


class AsyncEveClient:
    """An async client of one eve server (arguments as for [`EveClient`][eve_runtime.client.EveClient])."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        stream_read_timeout: float = 30.0,
        not_ready: Backoff | None = None,
        max_reconnects: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)
        self._stream_timeout = httpx.Timeout(timeout, read=stream_read_timeout)
        self._not_ready = not_ready or Backoff()
        self._max_reconnects = max_reconnects

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncEveClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        delays = self._not_ready.delays()
        while True:
            try:
                response = await self._http.request(method, path, json=body)
            except httpx.TransportError as exc:
                raise ServerUnreachable(self.base_url + path, describe(exc)) from exc
            try:
                return decode_answer(response.status_code, response.content, response.reason_phrase)
            except ResponseError as exc:
                delay = next(delays, None) if exc.code == NOT_READY else None
                if delay is None:
                    raise
                await anyio.sleep(delay)

    def session(self, session_id: str | None = None) -> AsyncSession:
        """An [`AsyncSession`][eve_runtime.client.AsyncSession]: one by id, else a new one its first `send` creates."""
        return AsyncSession(self, session_id)

    # -- the API ----------------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        """`GET /eve/v1/health`."""
        return await self._request("GET", f"{API}/health")

    async def info(self) -> dict[str, Any]:
        """`GET /eve/v1/info`: the agent-info document."""
        return await self._request("GET", f"{API}/info")

    async def create(self, message: str | Sequence[Mapping[str, Any]] | None = None, **fields: Any) -> str:
        """Create a session (with its first message when given); return its id. See `EveClient.create`."""
        body = camel_fields(fields)
        if message is not None:
            body["message"] = message if isinstance(message, str) else [dict(part) for part in message]
        return str((await self._request("POST", f"{API}/session", body))["sessionId"])

    async def send(
        self,
        session_id: str,
        message: str | Sequence[Mapping[str, Any]],
        *,
        turn_policy: str | None = None,
        idempotency_key: str | None = None,
        client_context: Any = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> str:
        """Send a message; return its delivery id. See `EveClient.send`."""
        body = message_body(
            message,
            turn_policy=turn_policy,
            idempotency_key=idempotency_key,
            client_context=client_context,
            output_schema=output_schema,
        )
        return str((await self._request("POST", session_path(session_id), body))["deliveryId"])

    async def respond(self, session_id: str, responses: Sequence[Mapping[str, Any]]) -> str:
        """Answer requests for input (`[{"requestId", "optionId"?, "text"?}]`); return the delivery id."""
        body = {"inputResponses": [camel_fields(response) for response in responses]}
        return str((await self._request("POST", session_path(session_id), body))["deliveryId"])

    async def cancel(self, session_id: str, turn_id: str | None = None) -> str:
        """Cancel the running turn: `accepted` or `no_active_turn`."""
        body = {"turnId": turn_id} if turn_id is not None else {}
        return str((await self._request("POST", session_path(session_id, "/cancel"), body))["status"])

    async def compact(self, session_id: str) -> str:
        """Summarize older turns (queued until a running turn settles): `accepted` or `no_active_session`."""
        return str((await self._request("POST", session_path(session_id, "/compact"), {}))["status"])

    async def clear(self, session_id: str) -> str:
        """Empty the session's history (open requests are cancelled): `accepted` or `no_active_session`."""
        return str((await self._request("POST", session_path(session_id, "/clear"), {}))["status"])

    async def reset(self, session_id: str, reason: str | None = None) -> str:
        """Retire the session for good: `reset` or `no_active_session`."""
        body = {"reason": reason} if reason is not None else {}
        return str((await self._request("POST", session_path(session_id, "/reset"), body))["status"])

    async def sessions(self) -> list[dict[str, Any]]:
        """`GET /eve/v1/dev/sessions` (`eve dev` only): every session, newest first."""
        sessions = (await self._request("GET", f"{API}/dev/sessions")).get("sessions")
        return [session for session in sessions or [] if isinstance(session, dict)]

    async def fire_schedule(self, name: str) -> list[str]:
        """`POST /eve/v1/dev/schedules/<name>` (`eve dev` only): fire a schedule once now; the sessions it reached."""
        ids = (await self._request("POST", schedule_path(name))).get("sessionIds")
        return [str(session_id) for session_id in ids or []]

    async def dev_build(self) -> dict[str, Any]:
        """`GET /eve/v1/dev/build` (`eve dev` only): `{generation, rebuilds, status, diagnostics}`."""
        return await self._request("GET", f"{API}/dev/build")

    async def event_count(self, session_id: str) -> int:
        """How many events the session has now."""
        path = session_path(session_id, "/stream")
        try:
            response = await self._http.get(path, params={"startIndex": "-1", "follow": "false"})
        except httpx.TransportError as exc:
            raise ServerUnreachable(self.base_url + path, describe(exc)) from exc
        if response.status_code != 200:
            decode_answer(response.status_code, response.content, response.reason_phrase)
        return int(response.headers.get("x-eve-stream-tail-index", "-1")) + 1

    # -- the stream -------------------------------------------------------------------------

    def stream(self, session_id: str, start_index: int = 0, follow: bool = True) -> AsyncIterator[Event]:
        """The session's events from `start_index`, resumed from the cursor after a drop. See `EveClient.stream`."""
        return self._read(StreamCursor(session_id, start_index, follow=follow, max_reconnects=self._max_reconnects))

    async def events(self, session_id: str, start_index: int = 0) -> list[Event]:
        """The session's events recorded so far (a bounded read)."""
        return [event async for event in self.stream(session_id, start_index, follow=False)]

    async def result(self, session_id: str, start_index: int = 0, *, delivery_id: str | None = None) -> TurnResult:
        """Follow the stream until a turn ends or waits for a person. See `EveClient.result`."""
        if start_index < 0:
            raise ValueError("result() reads from an absolute start_index (0 or more)")
        cursor = StreamCursor(session_id, start_index, follow=True, max_reconnects=self._max_reconnects)
        watch = TurnWatch(session_id, delivery_id=delivery_id)
        reader = self._read(cursor)
        try:
            async for event in reader:
                if watch.push(event):
                    break
        finally:
            await reader.aclose()
        return watch.result(cursor.index)

    async def _read(self, cursor: StreamCursor) -> AsyncGenerator[Event, None]:
        path = session_path(cursor.session_id, "/stream")
        not_ready = self._not_ready.delays()
        if cursor.relative and cursor.follow:
            cursor.anchor(await self.event_count(cursor.session_id))
        while True:
            try:
                async with self._http.stream(
                    "GET", path, params=cursor.params(), timeout=self._stream_timeout
                ) as response:
                    if response.status_code != 200:
                        await response.aread()
                        decode_answer(response.status_code, response.content, response.reason_phrase)
                    cursor.opened(response.headers)
                    async for chunk in response.aiter_bytes():
                        for event in cursor.feed(chunk):
                            yield event
                        if cursor.done:
                            break
                step = cursor.closed()
            except ResponseError as exc:
                if exc.code != STORE_UNAVAILABLE or not cursor.connected_once:
                    delay = next(not_ready, None) if exc.code == NOT_READY else None
                    if delay is None:
                        raise
                    await anyio.sleep(delay)
                    continue
                step = cursor.dropped("the server's store is unavailable")  # a 503 while reconnecting
            except httpx.TransportError as exc:
                if not cursor.connected_once:
                    raise ServerUnreachable(self.base_url + path, describe(exc)) from exc
                step = cursor.dropped(describe(exc))
            if step == "probe":
                if await self._probe(cursor, path):
                    return
                step = cursor.dropped("the stream ended before the session did")
            if step == "done":
                return
            if step == "later":
                await anyio.sleep(cursor.reconnect_delay())

    async def _probe(self, cursor: StreamCursor, path: str) -> bool:
        try:
            response = await self._http.get(path, params={"startIndex": "-1", "follow": "false"})
        except httpx.TransportError:
            return False
        return response.status_code == 200 and probe_ended(cursor, response.headers, response.content)
