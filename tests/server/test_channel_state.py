"""Channel state and metadata: seeded by a send, changed by handlers and `deliver`, projected before hooks.

Also compact and clear by address (`ctx.from_(address).compact()` / `.clear()`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.server.route_context import SessionHandle
from eve_runtime.store.sqlite import SqliteStore
from tests import hook_ledger
from tests.server.support import Harness, harness, scaffold_app

COUNTER = {
    "agent/channels/counter.py": """
from eve_runtime.authoring.channels import POST, define_channel
from tests.hook_ledger import LEDGER


async def receive(request, ctx):
    body = await ctx.json()
    sent = await ctx.from_(body["thread"]).send(body["text"], state=body.get("state"))
    return {"sessionId": sent.session_id, "created": sent.created}


async def compact(request, ctx):
    return await ctx.from_(ctx.params["thread"]).compact()


async def clear(request, ctx):
    return await ctx.from_(ctx.params["thread"]).clear()


def started(data, channel):
    channel.state["turns"] += 1
    LEDGER.append(("channel", channel.type, channel.state["turns"]))


def broken(data, channel):
    channel.state["turns"] = 1000  # dropped: the handler raises
    raise RuntimeError("a broken channel handler")


def metadata(state):
    if state.get("explode"):
        raise ValueError("a broken projection")
    LEDGER.append(("project", state["turns"]))
    return {"turns": state["turns"], "topic": state["topic"]}


def deliver(payload, channel):
    if payload["state"] and not payload["created"]:
        channel.state.update(payload["state"])


channel = define_channel(
    routes=[
        POST("/counter", receive),
        POST("/counter/{thread}/compact", compact),
        POST("/counter/{thread}/clear", clear),
    ],
    state={"turns": 0, "topic": None},
    metadata=metadata,
    deliver=deliver,
    events={"turn.started": started, "*": broken},
)
""",
    "agent/hooks/watch.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER


def seen(event, ctx):
    LEDGER.append(("hook", event["type"], ctx.channel.metadata if ctx.channel else None))


hook = define_hook({"turn.started": seen})
""",
    "agent/instructions/topic.py": """
from eve_runtime import define_dynamic, define_instructions
from tests.hook_ledger import LEDGER


def resolve(ctx):
    metadata = ctx.channel.metadata if ctx.channel else None
    LEDGER.append(("resolver", metadata))
    return define_instructions(f"The topic is {metadata['topic']}.") if metadata else None


topic = define_dynamic({"turn.started": resolve})
""",
}


@pytest.fixture
def counter_app(tmp_path: Path) -> Iterator[CompiledApp]:
    root = scaffold_app(tmp_path / "app")
    for relative, text in COUNTER.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    compiled = compile_app(root, write=False)
    assert compiled.ok, compiled.diagnostics
    hook_ledger.LEDGER.clear()
    yield compiled
    hook_ledger.LEDGER.clear()
    compiled.loader.release()


def served(app: CompiledApp, **options: Any) -> AbstractContextManager[Harness]:
    assert app.root is not None and app.manifest is not None
    return harness(app.root, app.manifest, **options)


def send(api: Harness, text: str, state: Any = None, thread: str = "t") -> str:
    response = api.client.post("/counter", json={"thread": thread, "text": text, "state": state})
    assert response.status_code == 200, response.text
    return str(response.json()["sessionId"])


def settled(api: Harness, sid: str, waiting: int) -> None:
    api.wait_for(sid, "session.waiting", count=waiting)
    api.call(api.runtime.hooks.settle, sid)


def snapshot(api: Harness, sid: str) -> Any:
    states = api.runtime.hooks.channels
    assert states is not None
    found = api.call(states.states.load, sid)
    assert found is not None
    return found


def after(ledger: list[Any], *entries: Any) -> None:
    """The entries appear in this order in the ledger."""
    position = -1
    for entry in entries:
        assert entry in ledger[position + 1 :], (entry, ledger)
        position = ledger.index(entry, position + 1)


def test_state_is_seeded_by_the_send_changed_by_handlers_and_projected_before_hooks_and_resolvers(
    counter_app: CompiledApp,
) -> None:
    with served(counter_app) as api:
        sid = send(api, "hi", state={"topic": "billing"})
        settled(api, sid, 1)
        metadata = {"turns": 1, "topic": "billing"}
        after(
            hook_ledger.LEDGER,
            ("project", 0),  # the seed, written with the session
            ("channel", "turn.started", 1),  # 1. the channel handler
            ("project", 1),  # 2. the projection
            ("hook", "turn.started", metadata),  # 3. the hooks see it
            ("resolver", metadata),  # 4. so do the dynamic resolvers
        )
        assert ("hook", "turn.started", {"turns": 0, "topic": "billing"}) not in hook_ledger.LEDGER
        assert snapshot(api, sid).state == {"turns": 1, "topic": "billing"}  # the raising handler's 1000 is dropped

        send(api, "again", state={"topic": "refunds"})  # deliver merges it into the existing session's state
        settled(api, sid, 2)
        assert ("resolver", {"turns": 2, "topic": "refunds"}) in hook_ledger.LEDGER
        assert snapshot(api, sid).metadata == {"turns": 2, "topic": "refunds"}


def test_a_raising_projection_keeps_the_previous_metadata_and_the_turn_goes_on(counter_app: CompiledApp) -> None:
    with served(counter_app) as api:
        sid = send(api, "hi", state={"topic": "a"})
        settled(api, sid, 1)
        send(api, "/reply still fine", state={"explode": True})
        settled(api, sid, 2)
        events = api.events(sid)
        assert [e["data"]["message"] for e in events if e["type"] == "message.completed"][-1] == "still fine"
        assert not any(e["type"] in {"turn.failed", "session.failed"} for e in events)
        found = snapshot(api, sid)
        assert found.state == {"turns": 2, "topic": "a", "explode": True}
        assert found.metadata == {"turns": 1, "topic": "a"}
        assert ("resolver", {"turns": 1, "topic": "a"}) in hook_ledger.LEDGER[-3:]


def test_state_and_metadata_survive_a_restart_on_sqlite(counter_app: CompiledApp, tmp_path: Path) -> None:
    data = tmp_path / "workflow-data"
    with served(counter_app, store=SqliteStore(data)) as api:
        sid = send(api, "hi", state={"topic": "durable"})
        settled(api, sid, 1)
    hook_ledger.LEDGER.clear()
    with served(counter_app, store=SqliteStore(data)) as api:
        assert snapshot(api, sid).metadata == {"turns": 1, "topic": "durable"}
        assert send(api, "after the restart") == sid
        settled(api, sid, 2)
        after(hook_ledger.LEDGER, ("channel", "turn.started", 2), ("resolver", {"turns": 2, "topic": "durable"}))


def test_compact_and_clear_by_address(counter_app: CompiledApp) -> None:
    with served(counter_app) as api:
        for kind in ("compact", "clear"):
            response = api.client.post(f"/counter/nobody/{kind}")
            assert response.json() == {"status": "no_active_session"}
        sid = send(api, "hi", state={"topic": "x"})
        settled(api, sid, 1)
        assert api.client.post("/counter/t/compact").json() == {"status": "accepted", "sessionId": sid}
        api.wait_for(sid, "compaction.completed")
        settled(api, sid, 2)
        assert api.client.post("/counter/t/clear").json() == {"status": "accepted", "sessionId": sid}
        api.wait_for(sid, "context.cleared")
        settled(api, sid, 3)
        assert snapshot(api, sid).metadata == {"turns": 1, "topic": "x"}  # a clear keeps the channel state
        assert api.call(api.store.address_holder, "counter:t") == sid


def test_a_stranded_holder_has_nothing_to_compact_and_refuses_a_clear(counter_app: CompiledApp) -> None:
    with served(counter_app) as api:

        async def stranded() -> str:
            record = dataclasses.replace(api.runtime.new_record(), eve_version="0.0.1")
            session, _ = await api.store.create_session(record)
            await api.store.claim_address(session.id, "counter:old")
            return session.id

        old = api.call(stranded)
        assert api.client.post("/counter/old/compact").json() == {"status": "no_active_session"}
        refused = api.client.post("/counter/old/clear")
        assert refused.status_code == 409 and refused.json()["code"] == "session_stranded"
        assert api.call(api.store.address_holder, "counter:old") == old  # neither ended it


def test_a_session_handle_compacts_and_clears_its_session(counter_app: CompiledApp) -> None:
    with served(counter_app) as api:
        sid = send(api, "hi")
        settled(api, sid, 1)
        handle = SessionHandle(api.runtime, sid, "steer")
        assert api.call(handle.compact) is True
        api.wait_for(sid, "compaction.completed")
        assert api.call(handle.clear) is True
        api.wait_for(sid, "context.cleared")
        assert api.call(SessionHandle(api.runtime, "ses_unknown", "steer").clear) is False
        assert api.call(SessionHandle(api.runtime, "ses_unknown", "steer").compact) is False


DELIVER_ONLY = {
    "agent/channels/plain.py": """
from eve_runtime.authoring.channels import POST, define_channel


async def receive(request, ctx):
    body = await ctx.json()
    return {"sessionId": (await ctx.from_("t").send(body["text"], state=body["state"])).session_id}


def deliver(payload, channel):
    channel.state = {**channel.state, **payload["state"]}


channel = define_channel(routes=[POST("/plain", receive)], metadata=lambda state: state, deliver=deliver)
""",
    "agent/instructions/topic.py": COUNTER["agent/instructions/topic.py"],
}


def test_the_next_turns_resolvers_see_what_deliver_changed(tmp_path: Path) -> None:
    root = scaffold_app(tmp_path / "plain")
    for relative, text in DELIVER_ONLY.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    compiled = compile_app(root, write=False)
    assert compiled.ok, compiled.diagnostics
    hook_ledger.LEDGER.clear()
    try:
        with served(compiled) as api:
            sid = api.client.post("/plain", json={"text": "one", "state": {"topic": "a"}}).json()["sessionId"]
            api.wait_for(sid, "session.waiting")
            for count, topic in enumerate(("b", "c"), start=2):
                api.client.post("/plain", json={"text": topic, "state": {"topic": topic}})
                api.wait_for(sid, "session.waiting", count=count)
        assert [entry[1]["topic"] for entry in hook_ledger.LEDGER] == ["a", "b", "c"]
    finally:
        hook_ledger.LEDGER.clear()
        compiled.loader.release()


KEYED = {
    "agent/channels/keyed.py": """
import time

from eve_runtime.authoring.channels import POST, define_channel
from tests.hook_ledger import LEDGER


async def receive(request, ctx):
    body = await ctx.json()
    sent = await ctx.from_(body["thread"]).send(body["text"], idempotency_key=body.get("id"), state=body.get("state"))
    return {"sessionId": sent.session_id, "created": sent.created, "duplicate": sent.duplicate}


def initial():
    LEDGER.append(("state()",))
    return {"seen": 0}


def deliver(payload, channel):
    LEDGER.append(("deliver", payload["deliveryId"]))
    if payload["state"] and payload["state"].get("block"):
        time.sleep(payload["state"]["block"])  # a blocking deliver: never on the event loop
    channel.state["seen"] += 1


channel = define_channel(routes=[POST("/keyed", receive)], state=initial, deliver=deliver)
""",
}


@pytest.fixture
def keyed_app(tmp_path: Path) -> Iterator[CompiledApp]:
    root = scaffold_app(tmp_path / "keyed")
    for relative, text in KEYED.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    compiled = compile_app(root, write=False)
    assert compiled.ok, compiled.diagnostics
    hook_ledger.LEDGER.clear()
    yield compiled
    hook_ledger.LEDGER.clear()
    compiled.loader.release()


def test_a_retried_send_runs_deliver_once(keyed_app: CompiledApp) -> None:
    with served(keyed_app) as api:
        first = api.client.post("/keyed", json={"thread": "k", "text": "hi", "id": "m-1"}).json()
        again = api.client.post("/keyed", json={"thread": "k", "text": "hi", "id": "m-1"}).json()
        assert first["created"] and not first["duplicate"]
        assert again == {"sessionId": first["sessionId"], "created": False, "duplicate": True}
        assert [e for e in hook_ledger.LEDGER if e[0] == "deliver"] == [("deliver", ANY)]
        assert snapshot(api, first["sessionId"]).state == {"seen": 1}


def test_only_the_send_that_creates_a_session_computes_its_seed(keyed_app: CompiledApp) -> None:
    with served(keyed_app) as api:
        sids = {api.client.post("/keyed", json={"thread": "s", "text": t}).json()["sessionId"] for t in "abc"}
        assert len(sids) == 1
        assert hook_ledger.LEDGER.count(("state()",)) == 1
        assert snapshot(api, sids.pop()).state == {"seen": 3}


def test_a_blocking_sync_deliver_neither_freezes_the_server_nor_outlives_its_timeout(
    keyed_app: CompiledApp, caplog: pytest.LogCaptureFixture
) -> None:
    with served(keyed_app) as api:
        sid = api.client.post("/keyed", json={"thread": "b", "text": "hi"}).json()["sessionId"]
        states = api.runtime.hooks.channels
        assert states is not None
        states.states.timeout = 0.2
        began = time.monotonic()
        api.client.post("/keyed", json={"thread": "b", "text": "more", "state": {"block": 1.5}})
        assert time.monotonic() - began < 1.0  # the timeout fired: the blocked thread is left behind
        assert "deliver hook of channel keyed failed" in caplog.text
        assert snapshot(api, sid).state == {"seen": 1}
