"""The store contract for schedules: `claim_schedule_fire`, run against every backend.

A schedule's fire time is claimed once, by one caller, ever: that is what makes a fire run
exactly once across restarts and across many processes sharing one store.
"""

from __future__ import annotations

import asyncio

import pytest

from eve_runtime.store import ScheduleClaim, Store
from tests.store.conftest import Backend

pytestmark = pytest.mark.anyio

MINUTE = 60.0
T0 = 1_800_000_000.0  # a whole minute


async def test_the_first_claim_of_a_schedule_has_no_previous_fire(store: Store) -> None:
    assert await store.claim_schedule_fire("digest", T0) == ScheduleClaim(claimed=True, previous=None)


async def test_a_fire_time_is_claimed_once(store: Store) -> None:
    assert (await store.claim_schedule_fire("digest", T0)).claimed
    again = await store.claim_schedule_fire("digest", T0)
    assert again == ScheduleClaim(claimed=False, previous=T0)


async def test_later_fire_times_are_claimed_in_order_and_report_the_one_before(store: Store) -> None:
    await store.claim_schedule_fire("digest", T0)
    assert await store.claim_schedule_fire("digest", T0 + MINUTE) == ScheduleClaim(True, T0)
    assert await store.claim_schedule_fire("digest", T0 + 5 * MINUTE) == ScheduleClaim(True, T0 + MINUTE)


async def test_a_fire_time_before_the_last_claimed_one_is_refused(store: Store) -> None:
    await store.claim_schedule_fire("digest", T0 + 10 * MINUTE)
    late = await store.claim_schedule_fire("digest", T0 + 2 * MINUTE)  # a process whose clock lags
    assert late == ScheduleClaim(claimed=False, previous=T0 + 10 * MINUTE)
    assert (await store.claim_schedule_fire("digest", T0 + 11 * MINUTE)).previous == T0 + 10 * MINUTE


async def test_schedules_are_claimed_independently(store: Store) -> None:
    assert (await store.claim_schedule_fire("billing/sweep", T0)).claimed
    assert (await store.claim_schedule_fire("digest", T0)).claimed
    assert await store.claim_schedule_fire("digest", T0 + MINUTE) == ScheduleClaim(True, T0)
    assert await store.claim_schedule_fire("billing/sweep", T0) == ScheduleClaim(False, T0)


async def test_racing_claims_of_one_fire_time_have_one_winner(store: Store) -> None:
    await store.claim_schedule_fire("digest", T0)
    claims = await asyncio.gather(*(store.claim_schedule_fire("digest", T0 + MINUTE) for _ in range(8)))
    assert [c.claimed for c in claims].count(True) == 1
    assert all(c.previous in (T0, T0 + MINUTE) for c in claims)


async def test_claims_survive_a_reopen(backend: Backend, store: Store) -> None:
    await store.claim_schedule_fire("digest", T0)
    reopened = await backend.reopen(store)
    assert await reopened.claim_schedule_fire("digest", T0) == ScheduleClaim(False, T0)
    assert await reopened.claim_schedule_fire("digest", T0 + MINUTE) == ScheduleClaim(True, T0)
