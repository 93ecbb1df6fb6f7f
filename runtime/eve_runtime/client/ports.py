"""What a `Session` needs of its client (and an `AsyncSession` of its async client).

The clients create sessions; these Protocols let the session modules name the client's calls
without importing the client modules (which import them).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from typing import Any, Protocol

from eve_runtime.client._protocol import StreamCursor
from eve_runtime.client.parts import Event

__all__ = ["AsyncSessionClient", "SessionClient"]


class SessionClient(Protocol):
    """The calls of [`EveClient`][eve_runtime.client.EveClient] a session makes."""

    _max_reconnects: int

    def _read(self, cursor: StreamCursor) -> Generator[Event, None, None]: ...

    def create(self, message: str | Sequence[Mapping[str, Any]] | None = None, **fields: Any) -> str: ...

    def send(
        self,
        session_id: str,
        message: str | Sequence[Mapping[str, Any]],
        *,
        turn_policy: str | None = None,
        idempotency_key: str | None = None,
        client_context: Any = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> str: ...

    def respond(self, session_id: str, responses: Sequence[Mapping[str, Any]]) -> str: ...

    def cancel(self, session_id: str, turn_id: str | None = None) -> str: ...

    def reset(self, session_id: str, reason: str | None = None) -> str: ...

    def event_count(self, session_id: str) -> int: ...

    def events(self, session_id: str, start_index: int = 0) -> list[Event]: ...


class AsyncSessionClient(Protocol):
    """The calls of [`AsyncEveClient`][eve_runtime.client.AsyncEveClient] a session makes."""

    _max_reconnects: int

    def _read(self, cursor: StreamCursor) -> AsyncGenerator[Event, None]: ...

    async def create(self, message: str | Sequence[Mapping[str, Any]] | None = None, **fields: Any) -> str: ...

    async def send(
        self,
        session_id: str,
        message: str | Sequence[Mapping[str, Any]],
        *,
        turn_policy: str | None = None,
        idempotency_key: str | None = None,
        client_context: Any = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> str: ...

    async def respond(self, session_id: str, responses: Sequence[Mapping[str, Any]]) -> str: ...

    async def cancel(self, session_id: str, turn_id: str | None = None) -> str: ...

    async def reset(self, session_id: str, reason: str | None = None) -> str: ...

    async def event_count(self, session_id: str) -> int: ...

    async def events(self, session_id: str, start_index: int = 0) -> list[Event]: ...
