"""`Session` and `Turn`: one conversation, one turn at a time, streamed as it happens.

```python
from eve_runtime.client import EveClient

with EveClient("http://127.0.0.1:2000") as eve:
    session = eve.session()  # a new session, created by its first message
    turn = session.send("/say Hello there.")
    for delta in turn.text():  # the reply's text as it streams, until the turn ends
        print(delta, end="", flush=True)
    result = turn.result()  # completed | failed | cancelled | waiting-for-input
    print(result.status, turn.usage.output_tokens)
```

A [`Turn`][eve_runtime.client.session.Turn] reads the session's stream from where its message
went in until the turn ends, or until it waits for a person: then `session.approve(request)`
(or `respond`) returns the turn that continues it.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

from eve_runtime.client._protocol import StreamCursor
from eve_runtime.client.events import MessageAppended, StreamEvent, parse_event
from eve_runtime.client.parts import Event, InputRequest, Usage
from eve_runtime.client.ports import SessionClient
from eve_runtime.client.result import TurnResult, TurnWatch

__all__ = ["Session", "Turn", "answer_of"]


def answer_of(request: InputRequest | str, option_id: str) -> dict[str, str]:
    """The `inputResponses` entry that picks `option_id` for a request (or a request id)."""
    request_id = request.request_id if isinstance(request, InputRequest) else request
    return {"requestId": request_id, "optionId": option_id}


class Turn:
    """One turn of a session as it streams.

    Iterate it for the turn's [typed events][eve_runtime.client.events.StreamEvent], or
    `text()` for the assistant's text deltas; either ends at the turn's boundary (see
    [`TurnResult`][eve_runtime.client.TurnResult]). Events of a turn that was still running when
    the message went in are skipped (`result().events` keeps them). Reading is one pass:
    breaking out and iterating again continues where it stopped, and `result()` reads whatever
    is left. Each model call streams its own text: the deltas of a step that narrates before
    calling tools come first, then those of the next step (`MessageAppended.step_index` tells
    them apart).
    """

    def __init__(self, client: SessionClient, session_id: str, start_index: int, delivery_id: str | None) -> None:
        self.session_id = session_id
        self.delivery_id = delivery_id
        """The delivery id of the message this turn took (None for a new session or an answer)."""
        self._client = client
        self._watch = TurnWatch(session_id, delivery_id=delivery_id)
        self._cursor = StreamCursor(session_id, start_index, follow=True, max_reconnects=client._max_reconnects)
        self._reader: Generator[Event, None, None] | None = None
        self._result: TurnResult | None = None

    @property
    def done(self) -> bool:
        """Whether the turn reached its boundary (or the stream ended)."""
        return self._result is not None

    @property
    def usage(self) -> Usage:
        """The tokens (and cost) of this turn's model calls read so far."""
        return self._watch.turn_usage

    def __iter__(self) -> Iterator[StreamEvent]:
        while self._result is None:
            if self._reader is None:
                self._reader = self._client._read(self._cursor)
            raw = next(self._reader, None)
            if raw is None:  # the session ended: nothing more will come
                self._finish()
                return
            if self._watch.push(raw):
                self._finish()
            if self._watch.armed:  # the end of a turn that was running when the message went in is not this turn
                yield parse_event(raw)

    def text(self) -> Iterator[str]:
        """The assistant's text as it streams (`message.appended` deltas), until the turn ends."""
        for event in self:
            if isinstance(event, MessageAppended) and event.delta:
                yield event.delta

    def result(self) -> TurnResult:
        """Read to the turn's end; how it ended, its reply, the requests it waits on, its usage."""
        for _ in self:
            pass
        assert self._result is not None
        return self._result

    def close(self) -> None:
        """Stop reading (the turn itself goes on in the server)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Turn:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _finish(self) -> None:
        self._result = self._watch.result(self._cursor.index)
        self.close()


class Session:
    """One session of a server, from [`EveClient.session()`][eve_runtime.client.EveClient.session].

    Without an id, the first `send` creates the session (`id` is set then).
    """

    def __init__(self, client: SessionClient, session_id: str | None = None) -> None:
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
    ) -> Turn:
        """Send a message (creating the session with it, the first time); the turn that takes it.

        The arguments are [`EveClient.send()`][eve_runtime.client.EveClient.send]'s. The turn
        is the one that takes this message, not one already running when it was sent.
        """
        options = {
            "turn_policy": turn_policy,
            "idempotency_key": idempotency_key,
            "client_context": client_context,
            "output_schema": dict(output_schema) if output_schema is not None else None,
        }
        if self.id is None:
            self.id = self.client.create(message, **options)
            return Turn(self.client, self.id, 0, None)
        start = self.client.event_count(self.id)
        delivery_id = self.client.send(self.id, message, **options)
        return Turn(self.client, self.id, start, delivery_id)

    def respond(self, responses: Sequence[Mapping[str, Any]]) -> Turn:
        """Answer requests for input (`[{"requestId", "optionId"?, "text"?}]`); the turn that goes on."""
        session_id = self._require()
        start = self.client.event_count(session_id)
        self.client.respond(session_id, responses)
        return Turn(self.client, session_id, start, None)

    def approve(self, request: InputRequest | str) -> Turn:
        """Approve a tool call waiting for approval (a request, or its id); the turn that goes on."""
        return self.respond([answer_of(request, "approve")])

    def deny(self, request: InputRequest | str) -> Turn:
        """Refuse a tool call waiting for approval (eve's `cancel` option); the turn that goes on."""
        return self.respond([answer_of(request, "cancel")])

    def cancel(self) -> str:
        """Cancel the running turn: `accepted` or `no_active_turn`."""
        return self.client.cancel(self._require())

    def reset(self) -> str:
        """Retire the session for good: `reset` or `no_active_session`."""
        return self.client.reset(self._require())

    def events(self) -> list[StreamEvent]:
        """The session's events so far, typed (each keeps its dict as `.raw`)."""
        return [parse_event(event) for event in self.client.events(self._require())]
