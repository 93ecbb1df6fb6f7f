"""What the client raises.

```
ClientError                   base of everything the client raises (an EveError)
├── ResponseError             the server answered with an error status: status, code, message
│   └── SessionStrandedError  409 `session_stranded`: another eve version built the session
├── ServerUnreachable         no answer at all (refused, reset, timed out)
├── StreamProtocolError       a stream that is not an eve stream (version header, a bad line)
└── StreamReconnectExhausted  a dropped stream could not be resumed; carries where to resume from
```
"""

from __future__ import annotations

from typing import Any

from eve_runtime.errors import EveError

__all__ = [
    "ClientError",
    "ResponseError",
    "ServerUnreachable",
    "SessionStrandedError",
    "StreamProtocolError",
    "StreamReconnectExhausted",
]


class ClientError(EveError):
    """Base class of the errors the eve client raises."""


class ResponseError(ClientError):
    """The server refused a request: a 4xx or 5xx answer.

    Attributes:
        status: The HTTP status code.
        code: The stable error code of the body (`session_not_active`, `session_not_ready`, ...),
            when the server sent one.
        message: The server's error message (`error` of the body), or the status line.
        body: The decoded JSON body (empty when the body was not JSON).
    """

    def __init__(self, status: int, message: str, code: str | None = None, body: dict[str, Any] | None = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.body = body or {}
        super().__init__(f"{status} {code}: {message}" if code else f"{status}: {message}")


class SessionStrandedError(ResponseError):
    """The session is stranded: a different eve version built it, so this server cannot run it (409).

    Sending, answering, following its stream and clearing it all fail this way; a bounded read
    (`events()`, `stream(follow=False)`) still returns its recorded history, and `reset()` ends
    it. The client does not reconnect a stream that answers this.

    Attributes:
        eve_version: The eve version that built the session, when it recorded one.
    """

    def __init__(self, status: int, message: str, code: str | None = None, body: dict[str, Any] | None = None) -> None:
        super().__init__(status, message, code, body)
        version = self.body.get("eveVersion")
        self.eve_version: str | None = version if isinstance(version, str) else None


class ServerUnreachable(ClientError):
    """The server did not answer (connection refused or reset, or a timeout).

    Attributes:
        url: The URL that was requested.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"eve server at {url} did not answer: {reason}")


class StreamProtocolError(ClientError):
    """The stream response is not an eve NDJSON stream this client can read."""


class StreamReconnectExhausted(ClientError):
    """A stream dropped and every reconnect attempt failed.

    Attributes:
        session_id: The session whose stream was read.
        stream_index: The cursor to resume from (`start_index` of the next `stream()` call).
    """

    def __init__(self, session_id: str, stream_index: int, reason: str) -> None:
        self.session_id = session_id
        self.stream_index = stream_index
        super().__init__(
            f"the stream of {session_id} dropped and could not be resumed ({reason}); "
            f"read it again from start_index={stream_index}"
        )
