"""Sessions by channel address: claims, races, idempotency keys, aliases, controls, restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.store.base import AddressInUse, SessionNotActive
from eve_runtime.store.sqlite import SqliteStore
from tests.harness import Harness, fast_options, make_harness, of_type

pytestmark = pytest.mark.anyio

ADDRESS = "webhook:thread-1"


def received(events: list[dict[str, Any]]) -> list[str]:
    return sorted(str(e["data"]["message"]) for e in of_type(events, "message.received"))


async def test_the_first_message_claims_the_address_before_the_first_turn(harness: Harness) -> None:
    first = await harness.rt.addresses.continue_or_create(ADDRESS, "message", {"message": "hello"})
    assert first.created
    # durable before any turn ran: the store already names the holder
    assert await harness.store.address_holder(ADDRESS) == first.session.id
    events = await harness.turns(first.session.id, 1)
    assert received(events) == ["hello"]
    again = await harness.rt.addresses.continue_or_create(ADDRESS, "message", {"message": "again"})
    assert again.session.id == first.session.id and not again.created


async def test_two_first_messages_at_once_start_one_session_that_gets_both(harness: Harness) -> None:
    addresses = harness.rt.addresses
    results = await asyncio.gather(
        *(addresses.continue_or_create(ADDRESS, "message", {"message": f"m{i}"}) for i in range(4))
    )
    winners = {r.session.id for r in results}
    assert len(winners) == 1 and [r.created for r in results].count(True) == 1
    [winner] = winners
    events = await harness.wait_for(winner, lambda ev: len(of_type(ev, "message.received")) == 4)
    assert received(events) == ["m0", "m1", "m2", "m3"]
    assert len(await harness.store.list_sessions()) == 1


async def test_a_repeated_idempotency_key_delivers_once(harness: Harness) -> None:
    addresses = harness.rt.addresses
    first = await addresses.continue_or_create(ADDRESS, "message", {"message": "once"}, idempotency_key="k1")
    retried = await addresses.continue_or_create(ADDRESS, "message", {"message": "once"}, idempotency_key="k1")
    assert retried.session.id == first.session.id and retried.delivery_id == first.delivery_id
    await harness.turns(first.session.id, 1)
    later = await addresses.continue_or_create(ADDRESS, "message", {"message": "twice"}, idempotency_key="k2")
    again = await addresses.continue_or_create(ADDRESS, "message", {"message": "twice"}, idempotency_key="k2")
    assert later.delivery_id == again.delivery_id
    events = await harness.turns(first.session.id, 2)
    assert received(events) == ["once", "twice"]


async def test_racing_keyed_first_sends_return_the_winner(harness: Harness) -> None:
    addresses = harness.rt.addresses
    results = await asyncio.gather(
        *(addresses.continue_or_create(ADDRESS, "message", {"message": "hi"}, idempotency_key="k") for _ in range(3))
    )
    assert len({r.session.id for r in results}) == 1
    assert len({r.delivery_id for r in results}) == 1
    events = await harness.turns(results[0].session.id, 1)
    assert received(events) == ["hi"]


async def test_an_alias_reaches_the_same_session_and_is_released_with_it(harness: Harness) -> None:
    addresses = harness.rt.addresses
    opened = await addresses.continue_or_create(ADDRESS, "message", {"message": "hello"})
    sid = opened.session.id
    await addresses.alias(sid, "webhook:alias")
    await addresses.alias(sid, "webhook:alias")  # again: fine
    await harness.turns(sid, 1)
    via_alias = await addresses.continue_or_create("webhook:alias", "message", {"message": "by alias"})
    assert via_alias.session.id == sid and not via_alias.created
    other = await addresses.continue_or_create("webhook:thread-2", "message", {"message": "other"})
    with pytest.raises(AddressInUse):
        await addresses.alias(other.session.id, "webhook:alias")
    await harness.turns(sid, 2)
    assert await addresses.reset(ADDRESS, "done") == sid
    assert await harness.store.address_holder("webhook:alias") is None  # every address is free again
    fresh = await addresses.continue_or_create("webhook:alias", "message", {"message": "new"})
    assert fresh.created and fresh.session.id not in (sid, other.session.id)


async def test_cancel_and_end_by_address(harness: Harness) -> None:
    addresses = harness.rt.addresses
    assert await addresses.cancel(ADDRESS) is None  # nothing holds it: no_active_turn
    assert await addresses.reset(ADDRESS) is None
    opened = await addresses.continue_or_create(ADDRESS, "message", {"message": "/delay 200\n/reply slow"})
    sid = opened.session.id
    await harness.wait_for(sid, lambda ev: bool(of_type(ev, "step.started")))
    assert await addresses.cancel(ADDRESS) == sid
    events = await harness.wait_for(sid, lambda ev: bool(of_type(ev, "turn.cancelled")))
    assert not of_type(events, "turn.completed")
    await harness.turns(sid, 1)
    assert await addresses.reset(ADDRESS) == sid
    record = await harness.store.get_session(sid)
    assert record is not None and record.status == "reset"
    with pytest.raises(SessionNotActive):  # controls never create a session
        await addresses.continue_or_create(ADDRESS, "responses", {"inputResponses": []})
    assert await harness.store.address_holder(ADDRESS) is None


# Pinned: it opens its own SQLite store and reopens it as a new process would (a memory store's data
# does not outlive the object), so the harness's store kind would change nothing.
@pytest.mark.parametrize("harness_store", ["sqlite"], indirect=True)
async def test_addresses_survive_a_restart(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "workflow-data")
    await store.open()
    h = await make_harness(tmp_path, store=store)
    try:
        opened = await h.rt.addresses.continue_or_create(ADDRESS, "message", {"message": "before"})
        await h.rt.addresses.alias(opened.session.id, "webhook:alias")
        await h.turns(opened.session.id, 1)
        await h.stop()
        await store.close()
        reopened = SqliteStore(tmp_path / "workflow-data")  # a new process on the same data
        await reopened.open()
        h.store = reopened
        await h.start()
        after = await h.rt.addresses.continue_or_create("webhook:alias", "message", {"message": "after"})
        assert after.session.id == opened.session.id and not after.created
        events = await h.turns(opened.session.id, 2)
        assert received(events) == ["after", "before"]
    finally:
        await h.stop()
        await h.store.close()
        h.app.loader.release()


async def test_a_reset_by_address_or_by_id_waits_at_most_the_reset_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(tmp_path, options=fast_options(reset_timeout=0.2))
    try:
        first = await h.rt.addresses.continue_or_create(ADDRESS, "message", {"message": "hello"})
        await h.turns(first.session.id, 1)
        monkeypatch.setattr(h.rt, "acknowledge", lambda delivery_id: None)  # the reset is never seen applied
        assert await asyncio.wait_for(h.rt.addresses.reset(ADDRESS), 5) == first.session.id
        assert "the reset was queued but not applied within 0.2s" in caplog.text
        other = await h.create("hi")
        assert await asyncio.wait_for(h.rt.reset(other, timeout=0.1), 5) is True
    finally:
        await h.stop()
