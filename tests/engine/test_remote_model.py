"""A model that answers over the network (`remote = True`): the step's events so far are written as its request goes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.models.base import Finish, ModelEvent, ModelRequest, TextDelta
from eve_runtime.store.base import Store
from tests.harness import fast_options, last_reply, make_harness, types

pytestmark = pytest.mark.anyio

FOREVER = 3600.0
"""A linger that would hang the test if the step waited it out."""


class WaitsForTheStore:
    """A model that answers only once the step's opening events are durable (as a slow provider would, later)."""

    def __init__(self, remote: bool) -> None:
        self.remote = remote
        self.store: Store | None = None
        self.seen: list[str] = []

    @property
    def model_id(self) -> str:
        return "test"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        assert self.store is not None
        session_id = (await self.store.list_sessions())[0].id
        await asyncio.wait_for(self.store.wait_for_events(session_id, 0, FOREVER), 10)
        self.seen = [row.type for row in await self.store.read_events(session_id)]
        yield TextDelta("hi")
        yield Finish(reason="stop")


async def test_a_remote_models_request_does_not_wait_for_the_linger(tmp_path: Path) -> None:
    model = WaitsForTheStore(remote=True)
    h = await make_harness(tmp_path, models={"test": model}, options=fast_options(flush_linger=FOREVER))
    model.store = h.store
    sid = await h.create("hello")
    events = await h.turns(sid, 1, timeout=30)
    await h.stop()
    assert last_reply(events) == "hi"
    assert model.seen == ["session.started", "turn.started", "message.received", "step.started"]
    assert types(events)[:4] == model.seen


async def test_a_local_models_step_still_lingers_into_one_write(tmp_path: Path) -> None:
    model = WaitsForTheStore(remote=False)
    h = await make_harness(tmp_path, models={"test": model}, options=fast_options(flush_linger=FOREVER))
    model.store = h.store
    sid = await h.create("hello")
    await asyncio.sleep(0.05)
    assert await h.store.event_count(sid) == 0  # nothing hurried the lingering write: the model still waits
    await h.stop()
