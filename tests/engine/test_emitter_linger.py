"""The emitter's background write lingers for more events, but an actor's end never waits that out."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from eve_runtime.checkpoint import UsageTotals
from eve_runtime.engine.emitter import Emitter
from eve_runtime.events.catalog import TurnAt
from eve_runtime.events.turns import SessionWaiting, TurnStarted
from eve_runtime.store.base import Commit
from eve_runtime.store.memory import MemoryStore
from tests.store.conftest import session

pytestmark = pytest.mark.anyio


async def _emitter(linger: float) -> tuple[MemoryStore, Emitter]:
    store = MemoryStore()
    await store.open()
    await store.create_session(session("s1"))
    return store, Emitter(store, "s1", 0, linger=linger)


async def test_close_after_a_commit_does_not_wait_out_the_linger() -> None:
    store, emitter = await _emitter(linger=3600.0)  # a wait that would hang the test
    emitter.emit(SessionWaiting("s1", UsageTotals()))  # schedules a lingering background write
    await emitter.commit()  # takes the event: the background write has nothing left
    with anyio.fail_after(10):
        await emitter.close()
    assert [row.type for row in await store.read_events("s1")] == ["session.waiting"]
    emitter.emit(SessionWaiting("s1", UsageTotals()))  # the emitter still works after a close
    await emitter.commit()
    assert await store.event_count("s1") == 2


async def test_close_with_events_pending_waits_for_their_write() -> None:
    store, emitter = await _emitter(linger=0.01)
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    await emitter.close()  # nothing committed them: the background write does, after its linger
    assert [row.type for row in await store.read_events("s1")] == ["session.waiting"]


async def test_hurry_writes_at_once_instead_of_lingering() -> None:
    store, emitter = await _emitter(linger=3600.0)  # a wait that would hang the test
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    emitter.hurry()  # before the background write even started
    with anyio.fail_after(10):
        assert await store.wait_for_events("s1", 0, 3600.0) == 1
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    await anyio.sleep(0.01)  # the background write now lingers for more
    assert await store.event_count("s1") == 1
    emitter.hurry()  # wakes it
    with anyio.fail_after(10):
        assert await store.wait_for_events("s1", 1, 3600.0) == 2
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    await anyio.sleep(0.01)
    assert await store.event_count("s1") == 2  # a hurry holds for the write it hurried, not for later ones
    await emitter.commit()
    await emitter.close()


async def test_hurry_with_nothing_pending_starts_no_write() -> None:
    store, emitter = await _emitter(linger=3600.0)
    emitter.hurry()
    with anyio.fail_after(10):
        await emitter.close()
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    await anyio.sleep(0.01)
    assert await store.event_count("s1") == 0  # it lingers as usual: the earlier hurry is not left armed
    await emitter.commit()


async def test_abort_stops_a_lingering_write() -> None:
    store, emitter = await _emitter(linger=0.01)
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    emitter.abort()  # a crash: the background write never runs
    await anyio.sleep(0.05)
    assert await store.event_count("s1") == 0
    await emitter.close()


class RecordingStore(MemoryStore):
    """Records, per write, its event types and whether it carried a checkpoint."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[list[str], bool]] = []

    async def commit(self, session_id: str, commit: Commit) -> None:
        self.writes.append(([row.type for row in commit.events], commit.checkpoint is not None))
        await super().commit(session_id, commit)


async def test_a_background_write_waiting_for_an_early_delivery_gives_way_to_a_commit() -> None:
    """While the background write waits for a delivery to be durable, the turn's end and its checkpoint queue up:
    they must land together, never the end without the state it belongs to."""
    store = RecordingStore()
    await store.open()
    await store.create_session(session("s1"))
    emitter = Emitter(store, "s1", 0)
    durable: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    emitter.after(durable)  # a store that does not order writes after it: the emitter waits
    emitter.emit(TurnStarted(TurnAt(sequence=1, turn_id="turn_1")))  # the background write starts, and waits
    for _ in range(5):
        await asyncio.sleep(0)
    emitter.emit(SessionWaiting("s1", UsageTotals()))
    ending = asyncio.ensure_future(emitter.commit(checkpoint=lambda count: '"closed"'))
    for _ in range(5):
        await asyncio.sleep(0)
    durable.set_result(None)
    with anyio.fail_after(10):
        await ending
        await emitter.close()
    assert store.writes == [(["turn.started", "session.waiting"], True)]
