"""The Python client of an eve server's `/eve/v1` API.

- [`EveClient`][eve_runtime.client.EveClient] and
  [`AsyncEveClient`][eve_runtime.client.AsyncEveClient]: create sessions, send messages and
  answers, cancel, reset, and read the NDJSON stream, resumed from its cursor after a dropped
  connection and deduplicated by `meta.id`; `result()` follows one turn to its end.
- [`Conversation`][eve_runtime.client.Conversation]: folds events into the conversation's
  state (messages, tool calls, pending requests, tasks, usage, status).
- [`transcript_of`][eve_runtime.client.transcript_of]: the `{role, text}` messages of a session.

Importing this package imports httpx; `eve_runtime` itself does not import it.
"""

from __future__ import annotations

from eve_runtime.client._protocol import Backoff
from eve_runtime.client.async_client import AsyncEveClient
from eve_runtime.client.errors import (
    ClientError,
    ResponseError,
    ServerUnreachable,
    SessionStrandedError,
    StreamProtocolError,
    StreamReconnectExhausted,
)
from eve_runtime.client.parts import (
    Event,
    InputRequest,
    Item,
    Message,
    Reasoning,
    Task,
    ToolCall,
    TurnError,
    Usage,
)
from eve_runtime.client.reducer import Conversation, Status
from eve_runtime.client.result import TurnResult, TurnStatus
from eve_runtime.client.sync_client import EveClient
from eve_runtime.client.transcript import TranscriptMessage, transcript_of

__all__ = [
    "AsyncEveClient",
    "Backoff",
    "ClientError",
    "Conversation",
    "Event",
    "EveClient",
    "InputRequest",
    "Item",
    "Message",
    "Reasoning",
    "ResponseError",
    "ServerUnreachable",
    "SessionStrandedError",
    "Status",
    "StreamProtocolError",
    "StreamReconnectExhausted",
    "Task",
    "ToolCall",
    "TranscriptMessage",
    "TurnError",
    "TurnResult",
    "TurnStatus",
    "Usage",
    "transcript_of",
]
