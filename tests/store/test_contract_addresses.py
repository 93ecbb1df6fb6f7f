"""The store contract for channel addresses, run against every backend (see `conftest.py`)."""

from __future__ import annotations

import asyncio

import pytest

from eve_runtime.store import MAX_ADDRESSES, AddressLimitReached, Commit, SessionNotActive, Store, StoreError
from tests.store.conftest import Backend, delivery, session

pytestmark = pytest.mark.anyio

ADDRESS = "webhook:thread-1"


async def test_create_at_address_claims_it_with_the_first_delivery(store: Store) -> None:
    record = session("s1")
    assert await store.create_at_address(record, delivery("d1"), ADDRESS) == (record, True)
    assert await store.address_holder(ADDRESS) == "s1"
    assert await store.session_addresses("s1") == [ADDRESS]
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]
    assert await store.address_holder("webhook:other") is None


async def test_a_held_address_makes_creation_a_no_op_returning_the_holder(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS)
    holder, created = await store.create_at_address(session("s2"), delivery("d2"), ADDRESS)
    assert (holder.id, created) == ("s1", False)
    assert await store.get_session("s2") is None  # nothing was written
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]
    assert (await store.enqueue("s1", delivery("d2"))).delivery.id == "d2"  # the delivery id is still free


async def test_concurrent_first_claims_create_one_session(store: Store) -> None:
    results = await asyncio.gather(
        *(store.create_at_address(session(f"s{i}"), delivery(f"d{i}"), ADDRESS) for i in range(8))
    )
    winners = {record.id for record, _created in results}
    assert len(winners) == 1
    assert [created for _record, created in results].count(True) == 1
    assert len(await store.list_sessions()) == 1


async def test_create_at_address_is_create_once_by_operation_id(store: Store) -> None:
    first, created = await store.create_at_address(session("s1", operation_id="op"), delivery("d1"), ADDRESS)
    again, created_again = await store.create_at_address(
        session("s2", operation_id="op"), delivery("d2"), "webhook:another"
    )
    assert created and not created_again and again == first
    assert await store.address_holder("webhook:another") is None


async def test_an_ended_holder_frees_its_addresses(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS)
    assert await store.claim_address("s1", "webhook:alias") == "s1"
    await store.commit("s1", Commit(status="reset"))
    assert await store.address_holder(ADDRESS) is None
    assert await store.address_holder("webhook:alias") is None
    assert await store.session_addresses("s1") == [ADDRESS, "webhook:alias"]  # still readable
    record, created = await store.create_at_address(session("s2"), delivery("d2"), ADDRESS)
    assert created and record.id == "s2"
    assert await store.address_holder(ADDRESS) == "s2"
    assert await store.session_addresses("s1") == ["webhook:alias"]


async def test_replacing_takes_the_address_from_that_holder_only(store: Store) -> None:
    await store.create_at_address(session("old"), delivery("d1"), ADDRESS)
    record, created = await store.create_at_address(session("new"), delivery("d2"), ADDRESS, replacing="old")
    assert created and record.id == "new"
    assert await store.address_holder(ADDRESS) == "new"
    assert (await store.get_session("old")) is not None  # the caller ends the replaced session itself
    holder, created = await store.create_at_address(session("third"), delivery("d3"), ADDRESS, replacing="old")
    assert (holder.id, created) == ("new", False)


async def test_aliases(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS)
    await store.create_at_address(session("s2"), delivery("d2"), "webhook:thread-2")
    assert await store.claim_address("s1", "webhook:alias") == "s1"
    assert await store.claim_address("s1", "webhook:alias") == "s1"  # again: a no-op
    assert await store.claim_address("s2", "webhook:alias") == "s1"  # held by another: refused, not taken
    assert await store.address_holder("webhook:alias") == "s1"
    assert await store.session_addresses("s1") == [ADDRESS, "webhook:alias"]
    assert await store.session_addresses("s2") == ["webhook:thread-2"]
    with pytest.raises(SessionNotActive):
        await store.claim_address("missing", "webhook:x")
    await store.commit("s2", Commit(status="completed"))
    with pytest.raises(SessionNotActive):
        await store.claim_address("s2", "webhook:x")


async def test_a_session_holds_at_most_max_addresses(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), "a:0")
    for i in range(1, MAX_ADDRESSES):
        assert await store.claim_address("s1", f"a:{i}") == "s1"
    assert await store.claim_address("s1", "a:7") == "s1"  # repeating one costs nothing
    with pytest.raises(AddressLimitReached, match=str(MAX_ADDRESSES)) as refused:
        await store.claim_address("s1", "a:one-too-many")
    assert isinstance(refused.value, StoreError) and refused.value.session_id == "s1"
    assert await store.address_holder("a:one-too-many") is None


async def test_odd_addresses_round_trip(store: Store) -> None:
    odd = "webhook:lone \ud800 surrogate and nul\x00"
    await store.create_at_address(session("s1"), delivery("d1"), odd)
    assert await store.address_holder(odd) == "s1"
    assert await store.session_addresses("s1") == [odd]


async def test_addresses_survive_a_restart(store: Store, backend: Backend) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS)
    await store.claim_address("s1", "webhook:alias")
    store = await backend.reopen(store)
    assert await store.address_holder(ADDRESS) == "s1"
    assert await store.address_holder("webhook:alias") == "s1"
    holder, created = await store.create_at_address(session("s2"), delivery("d2"), ADDRESS)
    assert (holder.id, created) == ("s1", False)
