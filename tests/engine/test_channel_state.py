"""`eve_runtime.engine.channel_state`: seeding, updates under the session's lock, isolation of failures."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from eve_runtime.authoring.channels import define_channel
from eve_runtime.engine.channel_state import ChannelSnapshot, ChannelStates, run_deliver, seed
from eve_runtime.store import MemoryStore, NewDelivery, SessionRecord

# Pinned to one store kind: these build their own memory store, not a harness (the channel-state
# part of the store contract runs on every backend in tests/store/test_contract_channel_state.py).
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("harness_store", ["memory"], indirect=True)]


def _fail(state: Any) -> Any:
    raise ValueError("no")


COUNTER = define_channel(state={"n": 0, "topic": None}, metadata=lambda state: {"n": state["n"]})


async def _store(*sessions: str) -> MemoryStore:
    store = MemoryStore()
    await store.open()
    for sid in sessions:
        await store.create_session(SessionRecord(sid, "main", 1.0, "0"), NewDelivery(f"d-{sid}", "message"))
    return store


async def test_seed_merges_the_sends_state_into_the_initial_state_and_projects_it() -> None:
    seeded = await seed("c", COUNTER, {"topic": "x"})
    assert seeded is not None
    assert ChannelSnapshot.decode(seeded) == ChannelSnapshot({"n": 0, "topic": "x"}, {"n": 0})
    assert await seed("c", define_channel(), None) is None  # nothing to keep
    assert json.loads(await seed("c", define_channel(), [1]) or "") == {"state": [1], "metadata": None}
    assert ChannelSnapshot.decode(await seed("c", define_channel(state={"a": 1}), 5) or "").state == 5
    with pytest.raises(TypeError):
        await seed("c", COUNTER, {"bad": object()})


async def test_update_projects_and_saves_only_what_changed() -> None:
    store = await _store("s1")
    states = ChannelStates(store)

    async def bump(state: Any) -> Any:
        state["n"] += 1
        return state

    assert (await states.update("s1", "c", COUNTER, bump)).metadata == {"n": 1}
    assert ChannelSnapshot.decode(await store.load_channel_state("s1") or "") == ChannelSnapshot(
        {"n": 1, "topic": None}, {"n": 1}
    )

    async def same(state: Any) -> Any:
        return state

    await store.save_channel_state("s1", "sentinel")  # untouched by an update that changes nothing
    await states.update("s1", "c", COUNTER, same)
    assert await store.load_channel_state("s1") == "sentinel"
    assert await ChannelStates(await _store()).load("unknown") is None


async def test_a_failing_projection_or_non_json_state_is_logged_and_changes_nothing_else(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = await _store("s1")
    states = ChannelStates(store)
    channel = define_channel(state={"n": 0}, metadata=lambda state: _fail(state) if state["n"] > 1 else dict(state))

    def to(value: Any) -> Any:
        async def change(state: Any) -> Any:
            return value

        return change

    assert (await states.update("s1", "c", channel, to({"n": 1}))).metadata == {"n": 1}
    after = await states.update("s1", "c", channel, to({"n": 2}))
    assert after == ChannelSnapshot({"n": 2}, {"n": 1})  # the previous metadata stays
    assert (await states.update("s1", "c", channel, to({"n": object()}))).state == {"n": 2}
    assert "metadata(state) of channel c failed" in caplog.text
    assert "not JSON data" in caplog.text
    await states.update("gone", "c", channel, to({"n": 1}))  # no such session: logged, not raised
    assert "could not be saved" in caplog.text


async def test_updates_of_one_session_never_overlap() -> None:
    store = await _store("s1")
    states = ChannelStates(store)
    channel = define_channel(state={"n": 0})

    async def slow_bump(state: Any) -> Any:
        value = state["n"]
        await asyncio.sleep(0.001)
        return {"n": value + 1}

    await asyncio.gather(*(states.update("s1", "c", channel, slow_bump) for _ in range(20)))
    assert (await states.load("s1")) == ChannelSnapshot({"n": 20})
    assert not states._locks  # released once nobody waits


async def test_deliver_changes_state_and_a_raising_deliver_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    store = await _store("s1")
    states = ChannelStates(store)

    def deliver(payload: dict[str, Any], channel: Any) -> None:
        channel.state["last"] = payload["state"]
        if payload["state"] == "bad":
            raise RuntimeError("deliver failed")

    channel = define_channel(state={"last": None}, deliver=deliver)
    await run_deliver(states, "c", channel, "s1", "t", {"state": "one"})
    await run_deliver(states, "c", channel, "s1", "t", {"state": "bad"})
    assert (await states.load("s1")) == ChannelSnapshot({"last": "one"})
    assert "deliver hook of channel c failed" in caplog.text
    await run_deliver(states, "c", define_channel(), "s1", "t", {"state": "ignored"})  # no hook: nothing
    assert (await states.load("s1")) == ChannelSnapshot({"last": "one"})
