"""The store contract, run against every backend (see `conftest.py`)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pytest

from eve_runtime.store import (
    IDEMPOTENCY_WINDOW,
    Commit,
    EventIndexConflict,
    EventRow,
    LineChunk,
    NewDelivery,
    OwnershipLost,
    SessionHandoff,
    SessionNotActive,
    Store,
    StoreError,
)
from tests.store.conftest import Backend, delivery, events, session

pytestmark = pytest.mark.anyio

ODD_STRINGS = [
    "nul\x00inside",
    "lone \ud800 high and \udfff low surrogate",
    "line\u2028separator\u2029paragraph",
    "emoji \U0001f600 and e\u0301",
    "",
]


# -- sessions ---------------------------------------------------------------------------------


async def test_create_get_and_list(store: Store) -> None:
    newer = session("s-newer", created_at=2000.0)
    older = session("s-older", created_at=1000.0)
    assert await store.create_session(newer) == (newer, True)
    assert await store.create_session(older, delivery("d1")) == (older, True)

    assert await store.get_session("s-newer") == newer
    assert await store.get_session("missing") is None
    assert await store.list_sessions() == [older, newer]
    assert await store.list_sessions("completed") == []
    [first] = await store.pending_deliveries("s-older")
    assert (first.id, first.seq, first.session_id, first.consumed) == ("d1", 0, "s-older", False)
    assert await store.pending_deliveries("s-newer") == []


async def test_create_existing_id_is_refused(store: Store) -> None:
    await store.create_session(session("s1"))
    with pytest.raises(StoreError, match="s1"):
        await store.create_session(session("s1"))


async def test_create_once_by_operation_id(store: Store) -> None:
    first, created = await store.create_session(session("s1", operation_id="op-1"), delivery("d1"))
    assert created
    again, created = await store.create_session(session("s2", operation_id="op-1"), delivery("d2"))
    assert (again, created) == (first, False)
    assert await store.get_session("s2") is None
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1"]


async def test_create_once_under_a_race(store: Store) -> None:
    results = await asyncio.gather(
        *(store.create_session(session(f"s{i}", operation_id="op"), delivery(f"d{i}")) for i in range(6))
    )
    assert sum(created for _, created in results) == 1
    [winner] = {record.id for record, _ in results}
    assert len(await store.list_sessions()) == 1
    assert len(await store.pending_deliveries(winner)) == 1


# -- inbox ------------------------------------------------------------------------------------


async def test_enqueue_order_seq_and_payload(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d0"))
    results = [
        await store.enqueue("s1", delivery("d1")),
        await store.enqueue("s1", NewDelivery("d2", "responses", {"responses": [{"id": "a", "ok": True}]})),
        await store.enqueue("s1", NewDelivery("d3", "cancel")),
    ]
    assert [(r.delivery.id, r.delivery.seq, r.duplicate) for r in results] == [
        ("d1", 1, False),
        ("d2", 2, False),
        ("d3", 3, False),
    ]
    pending = await store.pending_deliveries("s1")
    assert [(d.id, d.seq, d.kind) for d in pending] == [
        ("d0", 0, "message"),
        ("d1", 1, "message"),
        ("d2", 2, "responses"),
        ("d3", 3, "cancel"),
    ]
    assert pending[2].payload == {"responses": [{"id": "a", "ok": True}]}
    assert pending[3].payload == {}
    assert pending[1] == results[0].delivery
    assert all(isinstance(d.created_at, float) and d.created_at > 0 for d in pending)


async def test_enqueue_to_unknown_or_ended_session(store: Store) -> None:
    with pytest.raises(SessionNotActive):
        await store.enqueue("missing", delivery("d1"))
    await store.create_session(session("s1"), delivery("d1", key="k"))
    await store.commit("s1", Commit(status="completed"))
    with pytest.raises(SessionNotActive):
        await store.enqueue("s1", delivery("d2"))
    with pytest.raises(SessionNotActive):
        await store.enqueue("s1", delivery("d3", key="k"))


async def test_enqueue_refuses_a_taken_delivery_id_and_non_json(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d1"))
    await store.create_session(session("s2"))
    with pytest.raises(StoreError):
        await store.enqueue("s2", delivery("d1"))
    with pytest.raises(StoreError):
        await store.enqueue("s2", NewDelivery("d2", "message", {"bad": object()}))
    assert await store.pending_deliveries("s2") == []
    assert (await store.enqueue("s2", delivery("d3"))).delivery.seq == 0


async def test_idempotency_key_returns_the_first_delivery(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d0", key="k0"))
    await store.create_session(session("s2"))
    first = await store.enqueue("s1", delivery("d1", key="k1", text="first"))
    again = await store.enqueue("s1", delivery("d2", key="k1", text="other payload"))
    assert not first.duplicate and again.duplicate
    assert again.delivery == first.delivery
    assert again.delivery.payload == {"text": "first"}
    assert (await store.enqueue("s1", delivery("d3", key="k0"))).delivery.id == "d0"
    # Keys are per session.
    assert not (await store.enqueue("s2", delivery("d4", key="k1"))).duplicate
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d0", "d1"]
    # A consumed delivery is still found by its key.
    await store.commit("s1", Commit(consumed=["d1"]))
    repeat = await store.enqueue("s1", delivery("d5", key="k1"))
    assert repeat.duplicate and repeat.delivery.id == "d1" and repeat.delivery.consumed


async def test_idempotency_keys_concurrently(store: Store) -> None:
    await store.create_session(session("s1"))
    results = await asyncio.gather(*(store.enqueue("s1", delivery(f"d{i}", key="same")) for i in range(8)))
    assert sum(not r.duplicate for r in results) == 1
    assert len({r.delivery.id for r in results}) == 1
    assert len(await store.pending_deliveries("s1")) == 1


async def test_idempotency_window_boundary_survives_reopen(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1"))
    await store.enqueue("s1", delivery("d0", key="k0"))  # the oldest key
    keys = range(1, IDEMPOTENCY_WINDOW + 1)
    results = await asyncio.gather(*(store.enqueue("s1", delivery(f"d{i}", key=f"k{i}")) for i in keys))
    assert not any(r.duplicate for r in results)

    store = await backend.reopen(store)
    retries = await asyncio.gather(*(store.enqueue("s1", delivery(f"r{i}", key=f"k{i}")) for i in keys))
    assert all(r.duplicate and r.delivery.id == f"d{i}" for i, r in zip(keys, retries, strict=True))
    # k0 fell out of the window: it is a new delivery now, and pushes k1 out in turn, which
    # pushes k2 out when it comes back; k3 is still remembered.
    evicted = await store.enqueue("s1", delivery("r0", key="k0"))
    assert not evicted.duplicate and evicted.delivery.id == "r0"
    assert not (await store.enqueue("s1", delivery("r1-again", key="k1"))).duplicate
    assert (await store.enqueue("s1", delivery("x", key="k3"))).delivery.id == "d3"
    assert (await store.enqueue("s1", delivery("x", key="k0"))).delivery.id == "r0"
    assert len(await store.pending_deliveries("s1")) == IDEMPOTENCY_WINDOW + 3
    assert (await store.enqueue("s1", delivery("y", key="k2"))).delivery.id == "y"


async def test_pending_deliveries_after_consumption(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d0"))
    await store.create_session(session("s2"), delivery("other"))
    for i in (1, 2, 3):
        await store.enqueue("s1", delivery(f"d{i}"))
    await store.commit("s1", Commit(consumed=["d0", "d2", "other", "unknown"]))
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d1", "d3"]
    assert [d.id for d in await store.pending_deliveries("s2")] == ["other"]
    await store.commit("s1", Commit(consumed=["d1", "d3", "d0"]))
    assert await store.pending_deliveries("s1") == []
    assert await store.pending_deliveries("missing") == []


# -- commits ----------------------------------------------------------------------------------


async def test_a_refused_commit_writes_nothing(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d0"))
    await store.commit("s1", Commit(events=events(0, b"a", b"b"), history=['"h"'], checkpoint='{"n":1}'))
    bad = Commit(
        events=events(5, b"c"),
        history=['"h2"'],
        replace_history=True,
        checkpoint='{"n":2}',
        consumed=["d0"],
        status="completed",
    )
    with pytest.raises(EventIndexConflict):
        await store.commit("s1", bad)
    assert [e.line for e in await store.read_events("s1")] == [b"a", b"b"]
    assert await store.event_count("s1") == 2
    assert await store.load_history("s1") == ['"h"']
    assert await store.load_checkpoint("s1") == '{"n":1}'
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d0"]
    record = await store.get_session("s1")
    assert record is not None and record.status == "active"


async def test_event_index_conflict_allocates_nothing(store: Store) -> None:
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(events=events(0, b"e0")))
    for stale in (0, 2, -1):
        with pytest.raises(EventIndexConflict):
            await store.commit("s1", Commit(events=events(stale, b"x")))
    await store.commit("s1", Commit(events=events(1, b"e1", b"e2")))
    assert [(e.index, e.line) for e in await store.read_events("s1")] == [(0, b"e0"), (1, b"e1"), (2, b"e2")]


async def test_events_of_one_commit_must_be_consecutive(store: Store) -> None:
    await store.create_session(session("s1"))
    with pytest.raises(StoreError):
        await store.commit("s1", Commit(events=[EventRow(0, "t", b"a"), EventRow(2, "t", b"b")]))
    assert await store.event_count("s1") == 0


async def test_commit_to_a_missing_session_is_refused(store: Store) -> None:
    with pytest.raises(StoreError):
        await store.commit("missing", Commit(events=events(0, b"x")))


async def test_eight_concurrent_commits_at_one_index(store: Store) -> None:
    await store.create_session(session("s1"))
    outcomes = await asyncio.gather(
        *(store.commit("s1", Commit(events=events(0, f"w{i}".encode()))) for i in range(8)),
        return_exceptions=True,
    )
    winners = [i for i, outcome in enumerate(outcomes) if outcome is None]
    assert len(winners) == 1
    assert all(isinstance(o, EventIndexConflict) for o in outcomes if o is not None)
    assert [e.line for e in await store.read_events("s1")] == [f"w{winners[0]}".encode()]


async def test_read_events_slices(store: Store) -> None:
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(events=events(0, b"0", b"1", b"2", b"3", b"4", type="t")))

    async def lines(start: int = 0, end: int | None = None) -> list[bytes]:
        rows = await store.read_events("s1", start, end)
        assert [r.index for r in rows] == list(range(start, start + len(rows)))
        return [r.line for r in rows]

    assert await lines() == [b"0", b"1", b"2", b"3", b"4"]
    assert await lines(2) == [b"2", b"3", b"4"]
    assert await lines(1, 3) == [b"1", b"2"]
    assert await lines(3, 100) == [b"3", b"4"]
    assert await lines(5) == []
    assert await lines(9) == []
    assert await lines(2, 2) == []
    assert await lines(0, 0) == []
    assert (await store.read_events("s1", 4))[0] == EventRow(4, "t", b"4")
    assert await store.read_events("missing") == []
    assert await store.event_count("missing") == 0


async def test_read_events_can_leave_out_some_types(store: Store) -> None:
    await store.create_session(session("s1"))
    rows = [EventRow(0, "a", b"0"), EventRow(1, "delta", b"1"), EventRow(2, "b", b"2"), EventRow(3, "other", b"3")]
    rows.append(EventRow(4, "delta", b"4"))
    await store.commit("s1", Commit(events=rows))
    kept = await store.read_events("s1", skip=("delta", "other"))
    assert kept == [rows[0], rows[2]]  # the others keep their own indexes
    assert await store.read_events("s1", 1, 4, skip=("delta",)) == [rows[2], rows[3]]
    assert await store.read_events("s1", skip=()) == rows
    assert await store.read_events("missing", skip=("delta",)) == []


async def test_read_chunk_joins_the_stored_lines(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(events=events(0, b"0", b"1", b"2", b"3", type="t")))
    for _ in range(2):  # as written (a store may serve them from memory), then from a reopened store
        assert await store.read_chunk("s1", 0, 4) == LineChunk(4, b"0\n1\n2\n3\n")
        assert await store.read_chunk("s1", 1, 3) == LineChunk(2, b"1\n2\n")
        assert await store.read_chunk("s1", 3, 100) == LineChunk(1, b"3\n")
        assert await store.read_chunk("s1", 4, 9) == LineChunk(0, b"")
        assert await store.read_chunk("s1", 2, 2) == LineChunk(0, b"")
        assert await store.read_chunk("missing", 0, 9) == LineChunk(0, b"")
        store = await backend.reopen(store)


async def test_read_chunk_stops_after_the_first_stop_type(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1"))
    types = ["a", "end", "b", "end", "c"]
    await store.commit("s1", Commit(events=[EventRow(i, t, t.encode()) for i, t in enumerate(types)]))
    stop = frozenset({"end", "fail"})
    for _ in range(2):
        assert await store.read_chunk("s1", 0, 5, stop) == LineChunk(2, b"a\nend\n", stopped=True)
        assert await store.read_chunk("s1", 1, 5, stop) == LineChunk(1, b"end\n", stopped=True)
        assert await store.read_chunk("s1", 2, 5, stop) == LineChunk(2, b"b\nend\n", stopped=True)
        assert await store.read_chunk("s1", 2, 3, stop) == LineChunk(1, b"b\n")  # the stop is past `end`
        assert await store.read_chunk("s1", 4, 9, stop) == LineChunk(1, b"c\n")
        assert await store.read_chunk("s1", 5, 9, stop) == LineChunk(0, b"")
        assert await store.read_chunk("s1", 0, 5, frozenset({"fail"})) == LineChunk(5, b"a\nend\nb\nend\nc\n")
        store = await backend.reopen(store)


async def test_read_chunk_reads_on_across_commits(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1"))
    for n in range(6):
        await store.commit("s1", Commit(events=events(2 * n, b"%da" % n, b"%db" % n)))
    expected = b"".join(b"%da\n%db\n" % (n, n) for n in range(6))
    for _ in range(2):
        body, cursor = b"", 0
        while True:
            chunk = await store.read_chunk("s1", cursor, 12)
            if not chunk.count:
                break
            body, cursor = body + chunk.body, cursor + chunk.count
        assert (body, cursor) == (expected, 12)
        store = await backend.reopen(store)


async def test_event_lines_round_trip_byte_for_byte(store: Store, backend: Backend) -> None:
    lines = [
        b"",
        b'{"text":"nul\\u0000"}',
        b"raw nul \x00 inside",
        json.dumps({"text": "lone \ud800"}).encode(),
        "lone \ud800 surrogate".encode("utf-8", "surrogatepass"),
        "sep \u2028 \u2029".encode(),
        "emoji \U0001f600".encode(),
        b"\xff\xfe not utf-8",
        b"x" * (1 << 20),
    ]
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(events=events(0, *lines)))
    for _ in range(2):
        rows = await store.read_events("s1")
        assert [r.line for r in rows] == lines
        assert all(type(r.line) is bytes for r in rows)
        chunk = await store.read_chunk("s1", 0, len(lines))
        assert chunk == LineChunk(len(lines), b"".join(line + b"\n" for line in lines))
        assert type(chunk.body) is bytes
        store = await backend.reopen(store)


async def test_strings_round_trip_exactly(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1", operation_id="op \ud800\x00"))
    for i, text in enumerate(ODD_STRINGS):
        await store.enqueue("s1", delivery(f"d{i}", key=f"key {text}", text=text))
    await store.commit("s1", Commit(history=ODD_STRINGS, checkpoint=json.dumps(ODD_STRINGS, ensure_ascii=False)))
    for _ in range(2):
        pending = await store.pending_deliveries("s1")
        assert [d.payload["text"] for d in pending] == ODD_STRINGS
        assert [d.idempotency_key for d in pending] == [f"key {text}" for text in ODD_STRINGS]
        assert await store.load_history("s1") == ODD_STRINGS
        assert await store.load_checkpoint("s1") == json.dumps(ODD_STRINGS, ensure_ascii=False)
        for i, text in enumerate(ODD_STRINGS):
            assert (await store.enqueue("s1", delivery(f"again{i}", key=f"key {text}"))).duplicate
        record = await store.get_session("s1")
        assert record is not None and record.operation_id == "op \ud800\x00"
        assert not (await store.create_session(session("s2", operation_id="op \ud800\x00")))[1]
        store = await backend.reopen(store)


async def test_history_append_and_replace(store: Store) -> None:
    await store.create_session(session("s1"))
    assert await store.load_history("s1") == []
    await store.commit("s1", Commit(history=['"a"', '"b"']))
    await store.commit("s1", Commit(history=['"c"']))
    assert await store.load_history("s1") == ['"a"', '"b"', '"c"']
    await store.commit("s1", Commit(history=['"d"'], replace_history=True))
    assert await store.load_history("s1") == ['"d"']
    await store.commit("s1", Commit(history=['"e"']))
    assert await store.load_history("s1") == ['"d"', '"e"']
    await store.commit("s1", Commit(replace_history=True))
    assert await store.load_history("s1") == []
    assert await store.load_history("missing") == []


async def test_checkpoint_replace(store: Store) -> None:
    await store.create_session(session("s1"))
    await store.create_session(session("s2"))
    assert await store.load_checkpoint("s1") is None
    await store.commit("s1", Commit(checkpoint='{"step":1}'))
    await store.commit("s1", Commit(events=events(0, b"e")))
    assert await store.load_checkpoint("s1") == '{"step":1}'
    await store.commit("s1", Commit(checkpoint='{"step":2}'))
    assert await store.load_checkpoint("s1") == '{"step":2}'
    assert await store.load_checkpoint("s2") is None
    assert await store.load_checkpoint("missing") is None


async def test_status_change(store: Store) -> None:
    for name in ("a", "b", "c"):
        await store.create_session(session(name))
    await store.commit("a", Commit(status="completed"))
    await store.commit("c", Commit(status="failed", events=events(0, b"last")))
    assert [s.id for s in await store.list_sessions()] == ["b"]
    assert [s.id for s in await store.list_sessions("completed")] == ["a"]
    assert [s.id for s in await store.list_sessions("failed")] == ["c"]
    assert await store.list_sessions("reset") == []
    record = await store.get_session("a")
    assert record is not None and record.status == "completed"
    # An ended session still takes commits (its final events); its status stays.
    await store.commit("a", Commit(events=events(0, b"after")))
    assert await store.event_count("a") == 1


async def test_a_handoff_moves_the_record_to_a_new_deployment(store: Store, backend: Backend) -> None:
    record = dataclasses.replace(session("s1"), deployment="sha256:old", deadline=100.0)
    await store.create_session(record)
    await store.create_session(session("s2"))
    stored = await store.get_session("s1")
    assert stored is not None and (stored.deployment, stored.deadline) == ("sha256:old", 100.0)
    await store.commit("s1", Commit(events=events(0, b"e"), handoff=SessionHandoff("sha256:new", 200.0)))
    stored = await store.get_session("s1")
    assert stored is not None and (stored.deployment, stored.deadline, stored.status) == ("sha256:new", 200.0, "active")
    assert await store.event_count("s1") == 1
    await store.commit("s2", Commit(handoff=SessionHandoff("sha256:new", None)))  # a handoff alone; no deadline
    store = await backend.reopen(store)
    moved = {s.id: (s.deployment, s.deadline) for s in await store.list_sessions()}
    assert moved == {"s1": ("sha256:new", 200.0), "s2": ("sha256:new", None)}


async def test_a_refused_handoff_changes_nothing(store: Store) -> None:
    await store.create_session(dataclasses.replace(session("s1"), deployment="sha256:old"))
    with pytest.raises(EventIndexConflict):
        await store.commit("s1", Commit(events=events(5, b"e"), handoff=SessionHandoff("sha256:new", 1.0)))
    stored = await store.get_session("s1")
    assert stored is not None and (stored.deployment, stored.deadline) == ("sha256:old", None)


# -- waiting for events -------------------------------------------------------------------------


async def test_wait_for_events_wakes_on_commit(store: Store) -> None:
    await store.create_session(session("s1"))
    await store.create_session(session("s2"))
    waiter = asyncio.ensure_future(store.wait_for_events("s1", 0, timeout=30))
    await asyncio.sleep(0.02)
    await store.commit("s1", Commit(checkpoint="{}"))  # no events: no wake-up
    await store.commit("s2", Commit(events=events(0, b"other session")))
    await asyncio.sleep(0.02)
    assert not waiter.done()
    await store.commit("s1", Commit(events=events(0, b"a", b"b")))
    assert await asyncio.wait_for(waiter, 5) == 2
    assert await store.wait_for_events("s1", 1, timeout=30) == 2  # already there: no wait


async def test_wait_for_events_times_out_without_spinning(store: Store) -> None:
    await store.create_session(session("s1"))
    await store.commit("s1", Commit(events=events(0, b"a")))
    cpu, wall = time.process_time(), time.monotonic()
    assert await store.wait_for_events("s1", 1, timeout=0.3) == 1
    assert time.monotonic() - wall >= 0.25
    assert time.process_time() - cpu < 0.15, "wait_for_events must not poll"
    assert await store.wait_for_events("missing", 0, timeout=0.01) == 0
    assert await store.wait_for_events("s1", 1, timeout=0) == 1


async def test_many_waiters_wake_together(store: Store) -> None:
    await store.create_session(session("s1"))
    waiters = [asyncio.ensure_future(store.wait_for_events("s1", 0, timeout=30)) for _ in range(20)]
    await asyncio.sleep(0.02)
    await store.commit("s1", Commit(events=events(0, b"a")))
    assert await asyncio.wait_for(asyncio.gather(*waiters), 5) == [1] * 20


async def test_a_session_is_watched_while_a_reader_waits_for_its_events(store: Store) -> None:
    await store.create_session(session("s1"))
    await store.create_session(session("s2"))
    waiter = asyncio.ensure_future(store.wait_for_events("s1", 0, timeout=30))
    await asyncio.sleep(0.02)
    assert store.watched("s1")
    await store.commit("s1", Commit(events=events(0, b"a")))
    assert await asyncio.wait_for(waiter, 5) == 1
    assert store.watched("s1"), "a reader sending what it read is still watching"
    assert not store.watched("s2"), "nobody ever waited for s2"


# -- ownership --------------------------------------------------------------------------------


async def test_acquire_and_release(store: Store) -> None:
    await store.create_session(session("s1"))
    assert await store.acquire("s1", "A", ttl=30) == 1
    assert await store.acquire("s1", "A", ttl=30) == 1  # renewal keeps the token
    assert await store.acquire("s1", "B", ttl=30) is None
    await store.release("s1", "B")  # not the holder: no-op
    assert await store.acquire("s1", "B", ttl=30) is None
    assert await store.acquire("s2", "B", ttl=30) == 1  # claiming one session never fences another
    await store.release("s1", "A")
    assert await store.acquire("s1", "B", ttl=30) == 2
    assert await store.acquire("s1", "A", ttl=30) is None
    await store.release("s1", "B")
    assert await store.acquire("s1", "B", ttl=30) == 3  # a new lease after a release: a new token


async def test_an_expired_lease_can_be_taken_over(store: Store) -> None:
    assert await store.acquire("s1", "A", ttl=0.05) == 1
    assert await store.acquire("s1", "B", ttl=30) is None
    await asyncio.sleep(0.1)
    assert await store.acquire("s1", "B", ttl=30) == 2
    assert await store.acquire("s1", "A", ttl=30) is None


async def test_a_stale_fence_writes_nothing(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d0"))
    old = await store.acquire("s1", "A", ttl=0.05)
    assert old is not None
    await store.commit("s1", Commit(events=events(0, b"by A"), checkpoint='"A"', fence=old))
    await asyncio.sleep(0.1)
    new = await store.acquire("s1", "B", ttl=30)
    assert new is not None and new > old
    stale = Commit(
        events=events(1, b"stale"), history=['"x"'], checkpoint='"stale"', consumed=["d0"], status="failed", fence=old
    )
    with pytest.raises(OwnershipLost):
        await store.commit("s1", stale)
    assert [e.line for e in await store.read_events("s1")] == [b"by A"]
    assert await store.load_history("s1") == []
    assert await store.load_checkpoint("s1") == '"A"'
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d0"]
    record = await store.get_session("s1")
    assert record is not None and record.status == "active"
    await store.commit("s1", Commit(events=events(1, b"by B"), fence=new))
    await store.commit("s1", Commit(events=events(2, b"unfenced")))  # no fence: no check
    await store.release("s1", "B")
    with pytest.raises(OwnershipLost):  # a released lease fences nothing any more
        await store.commit("s1", Commit(events=events(3, b"late"), fence=new))
    assert await store.event_count("s1") == 3


async def test_orphaned_sessions_are_those_whose_lease_expired_unreleased(store: Store) -> None:
    for name in ("dead", "released", "alive", "ended", "idle"):
        await store.create_session(session(name))
    assert await store.acquire("dead", "A", ttl=0.05) == 1
    assert await store.acquire("released", "A", ttl=0.05) == 1
    await store.release("released", "A")
    assert await store.acquire("alive", "B", ttl=30) == 1
    assert await store.acquire("ended", "A", ttl=0.05) == 1
    await store.commit("ended", Commit(status="completed"))
    await asyncio.sleep(0.1)
    assert await store.orphaned_sessions() == ["dead"]
    assert await store.acquire("dead", "B", ttl=30) == 2  # taken over: no longer orphaned
    assert await store.orphaned_sessions() == []


async def test_a_dead_owners_leases_end_at_once_and_no_one_elses(store: Store) -> None:
    for name in ("a1", "a2", "b1", "gone"):
        await store.create_session(session(name))
    assert await store.acquire("a1", "A", ttl=30) == 1
    assert await store.acquire("a2", "A", ttl=30) == 1
    assert await store.acquire("b1", "B", ttl=30) == 1
    assert await store.acquire("gone", "C", ttl=30) == 1
    await store.release("gone", "C")
    assert await store.lease_owners() == ["A", "B"]  # C released its only lease
    await store.expire_leases("A")
    assert await store.lease_owners() == ["B"]
    assert await store.orphaned_sessions() == ["a1", "a2"]
    assert await store.acquire("a1", "D", ttl=30) == 2  # taken over now, with a new fencing token
    assert await store.acquire("b1", "D", ttl=30) is None  # a live owner keeps its lease
    await store.expire_leases("nobody")
    assert await store.lease_owners() == ["B", "D"]


# -- lifecycle --------------------------------------------------------------------------------


async def test_close_and_reopen_keeps_everything(store: Store, backend: Backend) -> None:
    await store.create_session(session("s1", operation_id="op-1"), delivery("d0", key="k0"))
    await store.create_session(session("s2"))
    await store.enqueue("s1", delivery("d1", key="k1"))
    await store.enqueue("s1", delivery("d2"))
    fence = await store.acquire("s1", "A", ttl=60)
    await store.commit(
        "s1",
        Commit(events=events(0, b"e0", b"e1"), history=['"m"'], checkpoint='"c"', consumed=["d1"], fence=fence),
    )
    await store.commit("s2", Commit(status="completed"))
    before = (await store.list_sessions(), await store.list_sessions("completed"))

    store = await backend.reopen(store)
    assert (await store.list_sessions(), await store.list_sessions("completed")) == before
    assert [e.line for e in await store.read_events("s1")] == [b"e0", b"e1"]
    assert await store.event_count("s1") == 2
    assert await store.load_history("s1") == ['"m"']
    assert await store.load_checkpoint("s1") == '"c"'
    assert [d.id for d in await store.pending_deliveries("s1")] == ["d0", "d2"]
    assert (await store.enqueue("s1", delivery("x", key="k1"))).delivery.id == "d1"
    assert (await store.enqueue("s1", delivery("d3"))).delivery.seq == 3
    assert not (await store.create_session(session("s3", operation_id="op-1")))[1]
    assert await store.acquire("s1", "B", ttl=60) is None
    assert await store.acquire("s1", "A", ttl=60) == fence
    await store.commit("s1", Commit(events=events(2, b"e2"), fence=fence))


async def test_a_closed_store_refuses_work(store: Store) -> None:
    await store.close()
    with pytest.raises(StoreError):
        await store.get_session("s1")
    with pytest.raises(StoreError):
        await store.create_session(session("s1"))
    await store.close()  # closing twice is fine
    await store.open()
    assert await store.get_session("s1") is None


async def test_an_open_store_is_healthy(store: Store) -> None:
    await store.create_session(session("s1"), delivery("d1"))
    assert await store.health() is None
