"""The Python client of an eve server's `/eve/v1` API.

- [`EveClient`][eve_runtime.client.EveClient] and
  [`AsyncEveClient`][eve_runtime.client.AsyncEveClient]: create sessions, send messages and
  answers, cancel, reset, and read the NDJSON stream, resumed from its cursor after a dropped
  connection and deduplicated by `meta.id`; `result()` follows one turn to its end.
- [`Session`][eve_runtime.client.Session] (`eve.session()`) and
  [`Turn`][eve_runtime.client.Turn], with their async twins: `session.send("hi").text()`
  streams one turn's text, then `turn.result()` and `turn.usage`.
- [`parse_event`][eve_runtime.client.parse_event]: typed events (`MessageAppended`,
  `ActionResult`, `InputRequested`, ...) beside the raw dicts, each keeping its dict as `.raw`.
- [`Conversation`][eve_runtime.client.Conversation]: folds events into the conversation's
  state (messages, tool calls, pending requests, tasks, usage, status).
- [`transcript_of`][eve_runtime.client.transcript_of]: the `{role, text}` messages of a session.

Importing this package imports httpx; `eve_runtime` itself does not import it.
"""

from __future__ import annotations

from eve_runtime.client._protocol import Backoff
from eve_runtime.client.async_client import AsyncEveClient
from eve_runtime.client.async_session import AsyncSession, AsyncTurn
from eve_runtime.client.errors import (
    ClientError,
    ResponseError,
    ServerUnreachable,
    SessionStrandedError,
    StreamProtocolError,
    StreamReconnectExhausted,
)
from eve_runtime.client.events import (
    ActionInputAppended,
    ActionResult,
    ActionsRequested,
    InputRequested,
    InputResolved,
    MessageAppended,
    MessageCompleted,
    MessageReceived,
    ReasoningAppended,
    ReasoningCompleted,
    SessionCompleted,
    SessionFailed,
    SessionStarted,
    SessionWaiting,
    StepCompleted,
    StepFailed,
    StepStarted,
    StreamEvent,
    TaskSettled,
    TaskStarted,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    TurnWaiting,
    parse_event,
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
from eve_runtime.client.session import Session, Turn
from eve_runtime.client.sync_client import EveClient
from eve_runtime.client.transcript import TranscriptMessage, transcript_of

__all__ = [
    "ActionInputAppended",
    "ActionResult",
    "ActionsRequested",
    "AsyncEveClient",
    "AsyncSession",
    "AsyncTurn",
    "Backoff",
    "ClientError",
    "Conversation",
    "EveClient",
    "Event",
    "InputRequest",
    "InputRequested",
    "InputResolved",
    "Item",
    "Message",
    "MessageAppended",
    "MessageCompleted",
    "MessageReceived",
    "Reasoning",
    "ReasoningAppended",
    "ReasoningCompleted",
    "ResponseError",
    "ServerUnreachable",
    "Session",
    "SessionCompleted",
    "SessionFailed",
    "SessionStarted",
    "SessionStrandedError",
    "SessionWaiting",
    "Status",
    "StepCompleted",
    "StepFailed",
    "StepStarted",
    "StreamEvent",
    "StreamProtocolError",
    "StreamReconnectExhausted",
    "Task",
    "TaskSettled",
    "TaskStarted",
    "ToolCall",
    "TranscriptMessage",
    "Turn",
    "TurnCancelled",
    "TurnCompleted",
    "TurnError",
    "TurnFailed",
    "TurnResult",
    "TurnStarted",
    "TurnStatus",
    "TurnWaiting",
    "Usage",
    "parse_event",
    "transcript_of",
]
