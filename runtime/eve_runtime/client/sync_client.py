"""`EveClient`: the `/eve/v1` API from synchronous Python code, over httpx.

```python
from eve_runtime.client import EveClient

with EveClient("http://127.0.0.1:2000") as eve:
    session = eve.session()
    for delta in session.send("Hello!").text():
        print(delta, end="", flush=True)
```
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

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
from eve_runtime.client.errors import ResponseError, ServerUnreachable
from eve_runtime.client.parts import Event
from eve_runtime.client.result import TurnResult, TurnWatch
from eve_runtime.client.session import Session

__all__ = ["EveClient"]


class EveClient:
    """A synchronous client of one eve server.

    Args:
        base_url: The server, e.g. `http://127.0.0.1:2000` (what `eve dev` prints).
        token: Sent as `Authorization: Bearer <token>` (`eve start` requires `EVE_AUTH_TOKEN`).
        timeout: Seconds for each request (connect, write, and reading an answer).
        stream_read_timeout: Seconds a live stream may stay silent before it counts as dropped
            (the server sends a heartbeat every 10 s) and is resumed from its cursor.
        not_ready: How long to retry a `409 session_not_ready` (by default up to 20 s in total).
        max_reconnects: Reconnect attempts in a row, without receiving anything, before a
            stream gives up with `StreamReconnectExhausted`.
        transport: An httpx transport to use instead of the network (tests).
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        stream_read_timeout: float = 30.0,
        not_ready: Backoff | None = None,
        max_reconnects: int = 8,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)
        self._stream_timeout = httpx.Timeout(timeout, read=stream_read_timeout)
        self._not_ready = not_ready or Backoff()
        self._max_reconnects = max_reconnects

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> EveClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; answer its JSON body, retrying `409 session_not_ready` within the budget."""
        delays = self._not_ready.delays()
        while True:
            try:
                response = self._http.request(method, path, json=body)
            except httpx.TransportError as exc:
                raise ServerUnreachable(self.base_url + path, describe(exc)) from exc
            try:
                return decode_answer(response.status_code, response.content, response.reason_phrase)
            except ResponseError as exc:
                delay = next(delays, None) if exc.code == NOT_READY else None
                if delay is None:
                    raise
                time.sleep(delay)

    def session(self, session_id: str | None = None) -> Session:
        """A [`Session`][eve_runtime.client.Session]: an existing one by id, else a new one its first `send` creates.

        `session.send(message)` returns the [`Turn`][eve_runtime.client.Turn] that takes the
        message: iterate `turn.text()` for the reply as it streams, then `turn.result()`.
        """
        return Session(self, session_id)

    # -- the API ----------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """`GET /eve/v1/health`: `{"ok": true, "status": "ready", "workflowId"}` (never needs a token)."""
        return self._request("GET", f"{API}/health")

    def info(self) -> dict[str, Any]:
        """`GET /eve/v1/info`: the agent-info document (version 6)."""
        return self._request("GET", f"{API}/info")

    def create(self, message: str | Sequence[Mapping[str, Any]] | None = None, **fields: Any) -> str:
        """Create a session, with its first message when given; return the session id.

        Args:
            message: The first message (text, or text parts); without it the session is parked.
            **fields: More body fields, in the wire's names or snake_case: `operationId` /
                `operation_id` (create-once), `idempotencyKey`, `clientContext`, `outputSchema`,
                `turnPolicy`, `mode`.
        """
        body = camel_fields(fields)
        if message is not None:
            body["message"] = message if isinstance(message, str) else [dict(part) for part in message]
        return str(self._request("POST", f"{API}/session", body)["sessionId"])

    def send(
        self,
        session_id: str,
        message: str | Sequence[Mapping[str, Any]],
        *,
        turn_policy: str | None = None,
        idempotency_key: str | None = None,
        client_context: Any = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> str:
        """Send a message to a session; return its delivery id (in `meta.deliveryIds` of the turn that takes it).

        Args:
            session_id: The session.
            message: Text, or text parts.
            turn_policy: `steer` (the server's default) or `queue`.
            idempotency_key: A retry with the same key starts nothing new.
            client_context: Turn-scoped context for the model (a string, strings, or an object).
            output_schema: A JSON Schema the turn's result must match (`TurnResult.data`).
        """
        body = message_body(
            message,
            turn_policy=turn_policy,
            idempotency_key=idempotency_key,
            client_context=client_context,
            output_schema=output_schema,
        )
        return str(self._request("POST", session_path(session_id), body)["deliveryId"])

    def respond(self, session_id: str, responses: Sequence[Mapping[str, Any]]) -> str:
        """Answer requests for input: `[{"requestId", "optionId"?, "text"?}, ...]`; return the delivery id."""
        body = {"inputResponses": [camel_fields(response) for response in responses]}
        return str(self._request("POST", session_path(session_id), body)["deliveryId"])

    def cancel(self, session_id: str, turn_id: str | None = None) -> str:
        """Cancel the running turn (only `turn_id`, if given): `accepted` or `no_active_turn`."""
        body = {"turnId": turn_id} if turn_id is not None else {}
        return str(self._request("POST", session_path(session_id, "/cancel"), body)["status"])

    def compact(self, session_id: str) -> str:
        """Summarize older turns (queued until a running turn settles): `accepted` or `no_active_session`."""
        return str((self._request("POST", session_path(session_id, "/compact"), {}))["status"])

    def clear(self, session_id: str) -> str:
        """Empty the session's history (open requests are cancelled): `accepted` or `no_active_session`."""
        return str((self._request("POST", session_path(session_id, "/clear"), {}))["status"])

    def reset(self, session_id: str, reason: str | None = None) -> str:
        """Retire the session for good: `reset` or `no_active_session`."""
        body = {"reason": reason} if reason is not None else {}
        return str(self._request("POST", session_path(session_id, "/reset"), body)["status"])

    def sessions(self) -> list[dict[str, Any]]:
        """`GET /eve/v1/dev/sessions` (served by `eve dev` only): every session, newest first."""
        sessions = self._request("GET", f"{API}/dev/sessions").get("sessions")
        return [session for session in sessions or [] if isinstance(session, dict)]

    def fire_schedule(self, name: str) -> list[str]:
        """`POST /eve/v1/dev/schedules/<name>` (`eve dev` only): fire a schedule once now; the sessions it reached.

        Raises:
            ResponseError: 404 `schedule_not_found` (the body's `availableScheduleIds` lists the
                app's schedules), or 404 `not_found` from a server without dev routes (`eve start`).
        """
        ids = self._request("POST", schedule_path(name)).get("sessionIds")
        return [str(session_id) for session_id in ids or []]

    def dev_build(self) -> dict[str, Any]:
        """`GET /eve/v1/dev/build` (`eve dev` only): `{generation, rebuilds, status, diagnostics}`."""
        return self._request("GET", f"{API}/dev/build")

    def event_count(self, session_id: str) -> int:
        """How many events the session has now (the cursor of a read that starts after them)."""
        path = session_path(session_id, "/stream")
        try:
            response = self._http.get(path, params={"startIndex": "-1", "follow": "false"})
        except httpx.TransportError as exc:
            raise ServerUnreachable(self.base_url + path, describe(exc)) from exc
        if response.status_code != 200:
            decode_answer(response.status_code, response.content, response.reason_phrase)
        return int(response.headers.get("x-eve-stream-tail-index", "-1")) + 1

    # -- the stream -------------------------------------------------------------------------

    def stream(self, session_id: str, start_index: int = 0, follow: bool = True) -> Iterator[Event]:
        """The session's events from `start_index` (an event count; negative: from the tail).

        With `follow` (the default) it keeps reading until the session ends; without, it stops
        at the tail seen when it opened. A dropped connection is resumed from the cursor (the
        count of events read), and an event seen before (same `meta.id`) is not yielded again.

        Raises:
            ResponseError: The server refused the read (404 unknown session, 409 `session_stranded`, ...).
            ServerUnreachable: The first connection failed.
            StreamReconnectExhausted: The connection dropped and could not be resumed.
        """
        return self._read(StreamCursor(session_id, start_index, follow=follow, max_reconnects=self._max_reconnects))

    def events(self, session_id: str, start_index: int = 0) -> list[Event]:
        """The session's events recorded so far (a bounded read)."""
        return list(self.stream(session_id, start_index, follow=False))

    def result(self, session_id: str, start_index: int = 0, *, delivery_id: str | None = None) -> TurnResult:
        """Follow the stream from `start_index` until a turn ends or waits for a person.

        Args:
            session_id: The session.
            start_index: Where the turn's events start: 0 for a new session, else the
                `event_count()` taken before sending, or a previous result's `next_index`.
            delivery_id: The `send()` delivery id: stop at the end of the turn that took that
                message, not at the end of a turn that was already running. Leave it out for an
                answer to a pending request (its events keep the waiting turn's delivery ids).
        """
        if start_index < 0:
            raise ValueError("result() reads from an absolute start_index (0 or more)")
        cursor = StreamCursor(session_id, start_index, follow=True, max_reconnects=self._max_reconnects)
        watch = TurnWatch(session_id, delivery_id=delivery_id)
        reader = self._read(cursor)
        try:
            for event in reader:
                if watch.push(event):
                    break
        finally:
            reader.close()
        return watch.result(cursor.index)

    def _read(self, cursor: StreamCursor) -> Generator[Event, None, None]:
        path = session_path(cursor.session_id, "/stream")
        not_ready = self._not_ready.delays()
        if cursor.relative and cursor.follow:
            cursor.anchor(self.event_count(cursor.session_id))
        while True:
            try:
                with self._http.stream("GET", path, params=cursor.params(), timeout=self._stream_timeout) as response:
                    if response.status_code != 200:
                        response.read()
                        decode_answer(response.status_code, response.content, response.reason_phrase)
                    cursor.opened(response.headers)
                    for chunk in response.iter_bytes():
                        yield from cursor.feed(chunk)
                        if cursor.done:
                            break
                step = cursor.closed()
            except ResponseError as exc:
                if exc.code != STORE_UNAVAILABLE or not cursor.connected_once:
                    delay = next(not_ready, None) if exc.code == NOT_READY else None
                    if delay is None:
                        raise
                    time.sleep(delay)
                    continue
                step = cursor.dropped("the server's store is unavailable")  # a 503 while reconnecting
            except httpx.TransportError as exc:
                if not cursor.connected_once:
                    raise ServerUnreachable(self.base_url + path, describe(exc)) from exc
                step = cursor.dropped(describe(exc))
            if step == "probe":
                if self._probe(cursor, path):
                    return
                step = cursor.dropped("the stream ended before the session did")
            if step == "done":
                return
            if step == "later":
                time.sleep(cursor.reconnect_delay())

    def _probe(self, cursor: StreamCursor, path: str) -> bool:
        try:
            response = self._http.get(path, params={"startIndex": "-1", "follow": "false"})
        except httpx.TransportError:
            return False
        return response.status_code == 200 and probe_ended(cursor, response.headers, response.content)
