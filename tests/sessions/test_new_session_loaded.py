"""A session created without a message is left loaded, empty: its first message's actor reads nothing back."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_runtime.store.memory import MemoryStore
from tests.harness import last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio


class CountingStore(MemoryStore):
    """Counts the reads an actor makes to load a session."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []

    async def load_checkpoint(self, session_id: str) -> str | None:
        self.loads.append("checkpoint")
        return await super().load_checkpoint(session_id)

    async def load_history(self, session_id: str) -> list[str]:
        self.loads.append("history")
        return await super().load_history(session_id)


@pytest.mark.parametrize("harness_store", ["memory"], indirect=True)
async def test_the_first_message_of_a_new_session_reads_no_checkpoint_or_history(tmp_path: Path) -> None:
    store = CountingStore()
    await store.open()
    h = await make_harness(tmp_path, store=store)
    sid = await h.create()
    await h.send(sid, "first")
    events = await h.turns(sid, 1)
    assert types(events)[:3] == ["session.started", "turn.started", "message.received"]
    assert last_reply(events) == "echo: first"
    assert store.loads == []
    await h.restart()  # a new process knows nothing of it: it reads the session back as usual
    await h.send(sid, "second")
    events = await h.turns(sid, 2)
    await h.stop()
    assert last_reply(events) == "echo: second"
    assert store.loads == ["checkpoint", "history"]
    assert [e["data"]["turnId"] for e in of_type(events, "turn.started")] == ["turn_0", "turn_1"]
