"""The HTTP/1.1 connection limits of a served app, and the uvicorn protocol that enforces them.

uvicorn's h11 protocol, with:

- an idle deadline: a connection that sends nothing for `keep_alive_timeout` seconds after it
  opened or after its last response is closed (uvicorn alone only times out the wait after a
  response, so a connection that never sends a byte stayed open for ever);
- a header deadline: the request line and headers must be complete `header_timeout` seconds
  after the connection was ready for them, else 408 and the connection is closed (a slow client
  cannot hold a connection by trickling its headers); the rest of a body the app answered
  without reading (a 413) has as long to arrive, else the connection is closed;
- caps on the request head: at most `max_header_bytes` bytes of request line and headers and at
  most `max_headers` header fields, else 431;
- protocol errors (a garbage request line, a bad `Content-Length`, bad chunking, ...) answered
  with the API's JSON error body `{"ok": false, "error", "code"}` instead of uvicorn's plain
  text, always 4xx, and the connection closed.

The values come from the environment (`EVE_HTTP_*`, see `HttpLimits.from_env`) so tests and
operators can tune them.
"""

from __future__ import annotations

import asyncio
import http
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from eve_runtime.server.responses import dump_json

__all__ = ["HttpLimits", "protocol_class"]


@dataclass(frozen=True)
class HttpLimits:
    """Deadlines and caps of every HTTP connection (see the module docstring)."""

    keep_alive_timeout: float = 5.0
    """Seconds a connection may stay silent after it opened or after its last response."""
    header_timeout: float = 10.0
    """Seconds the request line and headers have to arrive in full, once the connection is ready."""
    max_header_bytes: int = 16 * 1024
    """Bytes of request line and headers."""
    max_headers: int = 100
    """Header fields of one request."""

    ENV: ClassVar[Mapping[str, str]] = {
        "keep_alive_timeout": "EVE_HTTP_KEEP_ALIVE_TIMEOUT",
        "header_timeout": "EVE_HTTP_HEADER_TIMEOUT",
        "max_header_bytes": "EVE_HTTP_MAX_HEADER_BYTES",
        "max_headers": "EVE_HTTP_MAX_HEADERS",
    }
    """The environment variable of each field."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HttpLimits:
        """The limits, with each field an `EVE_HTTP_*` variable sets replaced.

        Raises:
            ValueError: A variable is not a positive number (an integer for the caps); the
                message names it and the fix.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, variable in cls.ENV.items():
            raw = env.get(variable, "").strip()
            if not raw:
                continue
            integral = name.startswith("max_")
            try:
                value: float = int(raw) if integral else float(raw)
            except ValueError:
                value = 0
            if not value > 0 or value == float("inf"):
                kind = "a positive whole number" if integral else "a positive number of seconds"
                raise ValueError(f"{variable}={raw!r} is not {kind}: set it to, say, {getattr(cls(), name)!r}.")
            values[name] = value
        return cls(**values)


def protocol_class(limits: HttpLimits) -> type[H11Protocol]:
    """The protocol class (uvicorn's `http=`) enforcing `limits`."""
    return type("EveH11Protocol", (_Protocol,), {"limits": limits})


class _Connection(h11.Connection):
    """h11's server connection, refusing oversized request heads and keeping the last protocol error."""

    def __init__(self, limits: HttpLimits) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
        self.limits = limits
        self.error: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.error = exc
            raise
        if isinstance(event, h11.Request):
            refusal = _refusal(event, self.limits)
            if refusal is not None:
                self.error = refusal
                raise refusal
        return event


def _refusal(request: h11.Request, limits: HttpLimits) -> h11.RemoteProtocolError | None:
    """Why a complete request head is refused (h11 caps only a head that arrives in pieces)."""
    if len(request.headers) > limits.max_headers:
        return h11.RemoteProtocolError(f"more than {limits.max_headers} header fields", error_status_hint=431)
    size = len(request.method) + len(request.target) + sum(len(k) + len(v) + 4 for k, v in request.headers)
    if size > limits.max_header_bytes:
        return h11.RemoteProtocolError(
            f"request line and headers larger than {limits.max_header_bytes} bytes", error_status_hint=431
        )
    names = {name for name, _value in request.headers}
    if b"transfer-encoding" in names and b"content-length" in names:
        return h11.RemoteProtocolError("both Transfer-Encoding and Content-Length", error_status_hint=400)
    return None


_CODES = {400: "bad_request", 408: "header_timeout", 431: "headers_too_large"}


def _error_bytes(status: int, error: str) -> bytes:
    """A complete `connection: close` response carrying the API's JSON error body."""
    body = dump_json({"ok": False, "error": error, "code": _CODES.get(status, "bad_request")})
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        "cache-control: no-store\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _Protocol(H11Protocol):
    """See the module docstring; `limits` is set by `protocol_class`."""

    limits: ClassVar[HttpLimits]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _Connection(self.limits)
        self._ready_at = 0.0
        self._head_timer: asyncio.TimerHandle | None = None
        self._got_bytes = False

    # -- deadlines ------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head(partial=False)

    def _await_head(self, *, partial: bool) -> None:
        """The connection is ready for a request head: start both deadlines."""
        self._ready_at = self.loop.time()
        self._got_bytes = partial
        self._arm()

    def _arm(self) -> None:
        self._cancel_head_timer()
        limit = self.limits.header_timeout if self._got_bytes else self.limits.keep_alive_timeout
        delay = max(0.0, self._ready_at + limit - self.loop.time())
        self._head_timer = self.loop.call_later(delay, self._head_deadline)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _draining(self) -> bool:
        """Answered, while the rest of a body the app did not read (a 413, say) is still arriving."""
        return self.conn.our_state is h11.DONE and self.conn.their_state is not h11.IDLE

    def _head_deadline(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._draining():
            self.transport.close()  # the unread body took longer than a request head may
            return
        if self.conn.their_state is not h11.IDLE:
            return
        elapsed = self.loop.time() - self._ready_at
        if self._got_bytes and elapsed >= self.limits.header_timeout:
            seconds = f"{self.limits.header_timeout:g}"
            self._refuse(408, f"The request line and headers did not arrive within {seconds} s.")
        elif not self._got_bytes and elapsed >= self.limits.keep_alive_timeout:
            self.transport.close()  # idle: nothing to answer
        else:
            self._arm()  # bytes arrived after the idle deadline was set: wait for the header one

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and data and not self._got_bytes:
            self._got_bytes = True
            self._arm()
        was_draining = self._draining()
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:
            if was_draining:  # the unread body is over: the next request gets fresh deadlines
                self._await_head(partial=bool(self.conn.trailing_data[0]))
        elif not self._draining():
            self._cancel_head_timer()  # a head is complete: the app's own deadlines take over

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:
            self._await_head(partial=bool(self.conn.trailing_data[0]))
        elif self._draining():
            self._await_head(partial=True)  # the rest of the body has the header deadline to arrive
        else:
            self._cancel_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    # -- errors ---------------------------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        error = self.conn.error if isinstance(self.conn, _Connection) else None
        status = error.error_status_hint if error is not None else 400
        if not 400 <= status < 500:
            status = 400  # never a 5xx for what the client sent (h11 says 501 for an unknown coding)
        reason = str(error) if error is not None else msg
        self._refuse(status, f"Invalid HTTP request: {reason[:200]}.")

    def _refuse(self, status: int, error: str) -> None:
        """Answer `status` with the JSON error body and close, whatever the request's state."""
        self._cancel_head_timer()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # The app is still reading this request: it sees a disconnect, and what it sends is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:  # too late for another status line
                self.transport.close()
                return
        if not self.transport.is_closing():
            self.transport.write(_error_bytes(status, error))
            self.transport.close()
