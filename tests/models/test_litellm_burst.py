"""A burst of buffered chunks from a real local provider (litellm, HTTP to uvicorn on 127.0.0.1).

litellm parses chunks it finds buffered without giving the event loop (or the GIL) away, so the
first text delta of a watched session is made durable before the call reads on
(`Emitter.settle`): the stream reader gets the first token while the rest is still being parsed.
At the finish chunk (`OutputDone`), the rest is written at once, before litellm assembles the
whole response. Nobody watching, nothing waits: the delta lingers into the step's write as before.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import eve_runtime.models as models
from eve_runtime.models import Finish, LiteLLMModel, ModelEvent, ModelRequest, TextDelta
from eve_runtime.store.base import Commit, Store
from tests.fixtures.openai_server import LocalOpenAIServer
from tests.harness import fast_options, last_reply, make_harness, of_type, open_store

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("real_local_calls"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_\\w+' attribute on the instance:DeprecationWarning"),
]

WORDS = 300
MODEL = f"openai/burst-{WORDS}"
REPLY = " ".join(f"w{n}" for n in range(WORDS))
FOREVER = 3600.0


class Observed:
    """The real litellm model; notes how many events were durable when the provider's second text chunk came."""

    remote = True

    def __init__(self) -> None:
        self.inner = LiteLLMModel(MODEL, guard=models.check_allow_model_requests)
        self.store: Store | None = None
        self.durable_at_second: int | None = None
        self.streamed_at_second: bool | None = None
        """Whether the stream reader had the first delta when the provider's second text chunk came."""
        self.streamed = False
        self.durable_at_finish: int | None = None
        self.ended = False

    @property
    def model_id(self) -> str:
        return MODEL

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        assert self.store is not None
        session_id = (await self.store.list_sessions())[0].id
        texts = 0
        async for event in self.inner.stream(request):
            if isinstance(event, TextDelta) and event.text:
                texts += 1
                if texts == 2:  # a synchronous read: nothing else runs meanwhile
                    self.durable_at_second = await self.store.event_count(session_id)
                    self.streamed_at_second = self.streamed
            if isinstance(event, Finish):
                self.durable_at_finish = await self.store.event_count(session_id)
            yield event
        self.ended = True


def _agent(api_base: str) -> dict[str, str]:
    source = (
        "from eve_runtime import define_agent\n\n"
        f"agent = define_agent(model={MODEL!r}, model_options={{'api_base': {api_base!r}}})\n"
    )
    return {"agent/agent.py": source}


async def _first_delta(store: Store, session_id: str, model: Observed) -> tuple[int, dict[str, Any], bool]:
    """Follow the session as the stream route does: its first `message.appended` (index, event), and whether the
    model had ended then."""
    known = 0
    while True:
        count = await store.wait_for_events(session_id, known, 30)
        chunk = await store.read_chunk(session_id, known, count)
        for offset, line in enumerate(chunk.body.splitlines()):
            event = json.loads(line)
            if event["type"] == "message.appended":
                model.streamed = True
                return known + offset, event, model.ended
        known = count


async def _unwatched_turn(store: Store, session_id: str) -> list[dict[str, Any]]:
    """The session's events once its turn ended, polled (`wait_for_events` would make it watched)."""
    while True:
        events = [json.loads(row.line) for row in await store.read_events(session_id)]
        if events and events[-1]["type"] == "session.waiting":
            return events
        await asyncio.sleep(0.02)


def _slow_delta_writes(store: Store) -> Store:
    """Writes carrying a text delta take a while (a slow disk, or a writer thread starved of the GIL)."""
    commit = store.commit

    async def slow_commit(session_id: str, changes: Commit) -> None:
        if any(row.type == "message.appended" for row in changes.events):
            await asyncio.sleep(0.2)
        await commit(session_id, changes)

    store.commit = slow_commit  # type: ignore[method-assign,assignment]
    return store


async def test_the_first_delta_of_a_watched_burst_is_streamed_before_the_burst_is_parsed(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    model = Observed()
    h = await make_harness(
        tmp_path,
        _agent(server.base_url),
        models={MODEL: model},
        options=fast_options(flush_linger=FOREVER),
        store=_slow_delta_writes(await open_store(tmp_path)),
    )
    model.store = h.store
    try:
        sid = await h.create("hi")
        index, first, ended = await asyncio.wait_for(_first_delta(h.store, sid, model), 60)
        events = await h.turns(sid, 1, timeout=60)
    finally:
        await h.stop()
    assert not ended  # the reader had the first token before litellm had parsed the burst
    assert first["data"]["messageDelta"] == "w0 "  # the first chunk alone: written before the second was read
    assert model.durable_at_second is not None and model.durable_at_second > index
    assert model.streamed_at_second  # ... and streamed, too
    # The last words were durable (so streamed) before litellm ended its stream (it assembles the whole
    # response first), not after it, with the step's end.
    assert model.durable_at_finish is not None
    assert "".join(e["data"].get("messageDelta", "") for e in events[: model.durable_at_finish]) == REPLY
    assert last_reply(events) == REPLY
    assert "".join(e["data"]["messageDelta"] for e in of_type(events, "message.appended")) == REPLY


async def test_nobody_watching_the_call_reads_on_and_the_delta_lingers(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    model = Observed()
    h = await make_harness(
        tmp_path, _agent(server.base_url), models={MODEL: model}, options=fast_options(flush_linger=FOREVER)
    )
    model.store = h.store
    try:
        sid = await h.create("hi")
        events = await asyncio.wait_for(_unwatched_turn(h.store, sid), 60)
    finally:
        await h.stop()
    index = [e["type"] for e in events].index("message.appended")
    assert model.durable_at_second is not None and model.durable_at_second <= index
    assert last_reply(events) == REPLY
