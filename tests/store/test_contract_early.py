"""`Store.enqueue_early`: the result told before it is durable, on every backend (see `conftest.py`)."""

from __future__ import annotations

import asyncio

import pytest

from eve_runtime.store import Commit, EnqueueResult, SessionNotActive, Store
from tests.store.conftest import Backend, delivery, session

pytestmark = pytest.mark.anyio

Told = list[tuple[EnqueueResult, "asyncio.Future[EnqueueResult]"]]


async def test_the_result_is_the_same_early_and_durable(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1"), delivery("d0"))
    told: Told = []

    def early(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        told.append((result, durable))

    result = await store.enqueue_early("s1", delivery("d1"), early)
    assert (result.delivery.id, result.delivery.seq, result.duplicate) == ("d1", 1, False)
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d0", "d1"]
    if backend.name == "sqlite":  # the store that can tell before its COMMIT does
        assert len(told) == 1
    assert len(told) <= 1
    for early_result, durable in told:
        assert early_result == result
        assert durable.done() and durable.result() == result


async def test_a_refused_delivery_is_never_told(store: Store) -> None:
    told: Told = []
    with pytest.raises(SessionNotActive):
        await store.enqueue_early("missing", delivery("d1"), lambda result, durable: told.append((result, durable)))
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(status="completed"))
    with pytest.raises(SessionNotActive):
        await store.enqueue_early("s1", delivery("d2"), lambda result, durable: told.append((result, durable)))
    assert told == []


async def test_a_caller_cancelled_after_being_told_leaves_the_delivery_durable(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1"))
    told: Told = []
    task: asyncio.Task[EnqueueResult] | None = None

    def early(result: EnqueueResult, durable: asyncio.Future[EnqueueResult]) -> None:
        told.append((result, durable))
        assert task is not None
        task.cancel()  # the caller goes away (a client hung up) while the delivery commits

    task = asyncio.create_task(store.enqueue_early("s1", delivery("d1"), early))
    done, _ = await asyncio.wait([task])
    if not told:  # a store that tells nothing early just enqueued it
        assert backend.name != "sqlite"
        assert task.result().delivery.id == "d1"
        return
    assert task.cancelled()
    result = await told[0][1]
    assert result.delivery.id == "d1"
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]
