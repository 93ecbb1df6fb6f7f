"""A process restarted after a kill takes its dead predecessor's sessions over at once (leases, many processes).

Its actors must not find the dead owner's leases still held: those are ended before any actor asks
for one (`Ownership.end_dead_siblings`), so no session waits for a later sweep to be woken again.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from eve_runtime.sessions.ownership import new_owner_id
from eve_runtime.store.base import Store
from tests import pg
from tests.harness import fast_options, make_harness, of_type, open_store

pytestmark = pytest.mark.anyio

SLOW_TURN = "/delay 30\n/reply " + " ".join(f"w{n}" for n in range(20))


def _dead_owner() -> str:
    """An owner id of this machine whose process has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    host, _pid, rand, machine = new_owner_id().rsplit(":", 3)
    return f"{host}:{child.pid}:{rand}:{machine}"


async def _take_over_after_a_kill(tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    h = await make_harness(tmp_path, options=fast_options(lease_seconds=300), store=store)  # no lease expires here
    sessions = [await h.create(SLOW_TURN) for _ in range(3)]
    for sid in sessions:
        await h.wait_for(sid, lambda events: bool(of_type(events, "message.appended")))
    assert h.rt.ownership is not None
    killed = h.rt.ownership.owner
    await h.crash()  # nothing released: the leases stay held
    dead = _dead_owner()  # this process still runs, so hand its leases to one that does not
    for sid in sessions:
        await store.release(sid, killed)
        assert await store.acquire(sid, dead, 300) is not None
    refused: list[str] = []
    acquire: Callable[[str, str, float], Awaitable[int | None]] = store.acquire

    async def recording(session_id: str, owner: str, ttl: float) -> int | None:
        fence = await acquire(session_id, owner, ttl)
        if fence is None:
            refused.append(session_id)
        return fence

    monkeypatch.setattr(store, "acquire", recording)
    await h.start()
    for sid in sessions:
        events = await h.turns(sid, 1, timeout=10)
        assert len(of_type(events, "turn.completed")) == 1
    assert refused == []  # every actor took its session's lease at once: none found the dead owner's held
    assert await store.lease_owners() in ([], [h.rt.ownership.owner])
    await h.stop()


async def test_a_restarted_process_takes_a_dead_predecessors_sessions_over_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _take_over_after_a_kill(tmp_path, await open_store(tmp_path), monkeypatch)


@pytest.mark.parametrize("harness_store", ["memory"], indirect=True)  # the store is Postgres's, whatever this says
async def test_on_postgres_a_restarted_process_takes_a_dead_predecessors_sessions_over_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eve_runtime.store.postgres import PostgresStore

    with pg.fresh_schema() as schema:
        store = PostgresStore(pg.database_url(), schema=schema)
        await store.open()
        try:
            await _take_over_after_a_kill(tmp_path, store, monkeypatch)
        finally:
            await store.close()
