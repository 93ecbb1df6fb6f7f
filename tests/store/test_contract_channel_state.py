"""The store contract for a session's channel state, run against every backend (see `conftest.py`)."""

from __future__ import annotations

import pytest

from eve_runtime.store import Commit, SessionNotActive, Store
from tests.store.conftest import Backend, delivery, session

pytestmark = pytest.mark.anyio

ADDRESS = "webhook:thread-1"


async def test_a_session_has_no_channel_state_until_one_is_written(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d1"))
    assert await store.load_channel_state("s1") is None
    assert await store.load_channel_state("unknown") is None


async def test_create_at_address_writes_the_channel_state_with_the_session(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS, channel_state='{"state": 1}')
    assert await store.load_channel_state("s1") == '{"state": 1}'


async def test_a_lost_creation_leaves_the_winners_channel_state(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS, channel_state='{"a": 1}')
    holder, created = await store.create_at_address(session("s2"), delivery("d2"), ADDRESS, channel_state='{"b": 2}')
    assert (holder.id, created) == ("s1", False)
    assert await store.load_channel_state("s1") == '{"a": 1}'
    assert await store.load_channel_state("s2") is None


async def test_save_replaces_the_channel_state_of_a_session_even_an_ended_one(store: Store) -> None:
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS)
    await store.save_channel_state("s1", '{"n": 1}')
    await store.save_channel_state("s1", '{"n": 2}')
    assert await store.load_channel_state("s1") == '{"n": 2}'
    await store.commit("s1", Commit(status="reset"))
    await store.save_channel_state("s1", '{"n": 3}')
    assert await store.load_channel_state("s1") == '{"n": 3}'


async def test_save_refuses_an_unknown_session(store: Store) -> None:
    with pytest.raises(SessionNotActive):
        await store.save_channel_state("nope", "{}")


async def test_channel_state_survives_a_reopen_and_a_cleared_history(backend: Backend) -> None:
    store = await backend.open()
    await store.create_at_address(session("s1"), delivery("d1"), ADDRESS, channel_state='{"n": "\\ud800"}')
    await store.save_channel_state("s1", '{"n": "é"}')
    await store.commit("s1", Commit(history=['{"role": "user"}'], checkpoint="{}"))
    await store.commit("s1", Commit(replace_history=True, checkpoint="{}"))
    store = await backend.reopen(store)
    try:
        assert await store.load_channel_state("s1") == '{"n": "é"}'
    finally:
        await backend.close()
