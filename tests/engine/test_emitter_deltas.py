"""Streamed deltas: while a reader watches the stream, the first is written at once (no linger) and later
ones merge until the interval passed; with nobody watching they linger like any event; a background
write never takes events ahead of a commit queued for them."""

from __future__ import annotations

import asyncio
import json

import pytest

from eve_runtime.engine.emitter import Emitter
from eve_runtime.events.catalog import StepAt, TurnAt
from eve_runtime.events.turns import MessageAppended, TurnStarted
from eve_runtime.store.base import Commit, SessionRecord
from eve_runtime.store.memory import MemoryStore

pytestmark = pytest.mark.anyio

AT = StepAt(sequence=0, step_index=0, turn_id="turn_1")
A_MINUTE = 60.0


async def _store() -> MemoryStore:
    store = MemoryStore()
    await store.open()
    await store.create_session(SessionRecord("s1", "main", 1.0, "0"))
    return store


def _watch(store: MemoryStore) -> asyncio.Task[int]:
    """A reader tailing the session's stream (it waits for an event that never comes)."""
    return asyncio.ensure_future(store.wait_for_events("s1", 10**9, A_MINUTE))


async def _texts(store: MemoryStore) -> list[str]:
    return [json.loads(row.line)["data"].get("messageDelta", "") for row in await store.read_events("s1", 0)]


async def test_the_first_delta_does_not_linger_and_later_ones_merge_within_the_interval() -> None:
    store = await _store()
    reader = _watch(store)
    await asyncio.sleep(0)
    emitter = Emitter(store, "s1", 0, linger=A_MINUTE, delta_interval=A_MINUTE)
    emitter.emit(MessageAppended(AT, "Hello"))
    # Written long before the linger would have let it go: wait_for_events returns once it is durable.
    assert await asyncio.wait_for(store.wait_for_events("s1", 0, A_MINUTE), 10) == 1
    emitter.emit(MessageAppended(AT, " wor"))
    emitter.emit(MessageAppended(AT, "ld"))
    await asyncio.sleep(0.01)
    assert await store.event_count("s1") == 1  # held back: the interval since the first write has not passed
    await emitter.flush()  # a commit does not wait for the interval
    assert await _texts(store) == ["Hello", " world"]
    await emitter.close()
    reader.cancel()


async def test_with_nobody_watching_a_delta_lingers_like_any_event() -> None:
    store = await _store()
    emitter = Emitter(store, "s1", 0, linger=A_MINUTE, delta_interval=0.0)
    emitter.emit(TurnStarted(TurnAt(sequence=0, turn_id="turn_1")))
    emitter.emit(MessageAppended(AT, "Hi"))
    await asyncio.sleep(0.01)
    assert await store.event_count("s1") == 0  # no reader: both wait for the step's commit
    reader = _watch(store)
    await asyncio.sleep(0)
    emitter.emit(MessageAppended(AT, "!"))  # a reader arrived: the next delta goes at once, with the rest
    assert await asyncio.wait_for(store.wait_for_events("s1", 0, A_MINUTE), 10) == 2
    assert await _texts(store) == ["", "Hi!"]
    await emitter.close()
    reader.cancel()


async def test_other_events_still_linger() -> None:
    store = await _store()
    reader = _watch(store)
    emitter = Emitter(store, "s1", 0, linger=A_MINUTE, delta_interval=0.0)
    emitter.emit(TurnStarted(TurnAt(sequence=0, turn_id="turn_1")))
    await asyncio.sleep(0.01)
    assert await store.event_count("s1") == 0
    emitter.emit(MessageAppended(AT, "Hi"))  # the delta is due at once, and takes the events before it along
    assert await asyncio.wait_for(store.wait_for_events("s1", 0, A_MINUTE), 10) == 2
    await emitter.close()
    reader.cancel()


async def test_deltas_after_the_interval_are_written_without_a_commit() -> None:
    store = await _store()
    emitter = Emitter(store, "s1", 0, delta_interval=0.001)
    for word in ("a", "b", "c"):
        known = await store.event_count("s1")
        emitter.emit(MessageAppended(AT, word))
        await asyncio.wait_for(store.wait_for_events("s1", known, A_MINUTE), 10)
    assert "".join(await _texts(store)) == "abc"
    await emitter.close()


class GatedStore(MemoryStore):
    """A store whose commits wait for `gate`, recording what each wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.writes: list[tuple[list[str], bool]] = []

    async def commit(self, session_id: str, commit: Commit) -> None:
        await self.gate.wait()
        self.writes.append(([row.type for row in commit.events], commit.checkpoint is not None))
        await super().commit(session_id, commit)


async def test_a_background_write_gives_way_to_a_commit_queued_behind_it() -> None:
    store = GatedStore()
    await store.open()
    await store.create_session(SessionRecord("s1", "main", 1.0, "0"))
    emitter = Emitter(store, "s1", 0, delta_interval=0.0)
    store.gate.clear()
    first = asyncio.create_task(emitter.commit(checkpoint=lambda count: '"first"'))  # holds the write lock
    await asyncio.sleep(0.01)
    emitter.emit(MessageAppended(AT, "Hi"))  # due at once: the background write queues for the lock
    await asyncio.sleep(0.01)
    emitter.emit(TurnStarted(TurnAt(sequence=1, turn_id="turn_2")))
    second = asyncio.create_task(emitter.commit(checkpoint=lambda count: '"second"'))  # queued after it
    await asyncio.sleep(0.01)
    store.gate.set()
    await asyncio.gather(first, second)
    await emitter.close()
    # The events emitted before the second commit land with its checkpoint, never ahead of it alone.
    assert store.writes == [([], True), (["message.appended", "turn.started"], True)]
