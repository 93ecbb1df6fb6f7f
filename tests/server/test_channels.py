"""Custom channels over HTTP: the template's webhook channel, a replaced eve channel, replacement, order."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.info import cli_info
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.auth import BearerTokenAuth
from eve_runtime.store.sqlite import SqliteStore
from tests import hook_ledger
from tests.helpers import write_events
from tests.server.support import Harness, LiveServer, harness, scaffold_app

MESSAGES = "/webhook/messages"


def thread() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def replies(api: Harness, name: str, count: int = 1) -> list[dict[str, Any]]:
    """The thread's outbox once it holds `count` replies (the channel handler runs after the event is durable)."""
    for _ in range(200):
        response = api.client.get(f"/webhook/threads/{name}/replies")
        assert response.status_code == 200, response.text
        found: list[dict[str, Any]] = response.json()["replies"]
        if len(found) >= count:
            return found
        api.call(_sleep)
    raise AssertionError(f"no {count} replies for {name}")


async def _sleep() -> None:
    import asyncio

    await asyncio.sleep(0.02)


@pytest.fixture
def app_with(tmp_path: Path) -> Iterator[Any]:
    """Compile the template plus extra files; the loaded generations are released afterwards."""
    built: list[CompiledApp] = []

    def build(files: dict[str, str]) -> CompiledApp:
        root = scaffold_app(tmp_path / f"app{len(built)}")
        for relative, text in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        compiled = compile_app(root, write=False)
        built.append(compiled)
        return compiled

    yield build
    for compiled in built:
        compiled.loader.release()


# -- the template's webhook channel ------------------------------------------------------------------


def test_a_thread_is_one_conversation_and_replies_are_posted_back(api: Harness) -> None:
    name = thread()
    first = api.client.post(MESSAGES, json={"thread": name, "text": "hello"})
    assert first.status_code == 202, first.text
    assert first.json()["created"] is True
    sid = first.json()["sessionId"]
    assert replies(api, name)[0] == {"thread": name, "sessionId": sid, "text": "echo: hello"}
    second = api.client.post(MESSAGES, json={"thread": name, "text": "/reply again"})
    assert second.status_code == 202 and second.json()["sessionId"] == sid and second.json()["created"] is False
    assert [r["text"] for r in replies(api, name, 2)] == ["echo: hello", "again"]
    assert api.call(api.store.address_holder, f"webhook:{name}") == sid


def test_a_retried_message_id_is_delivered_once(api: Harness) -> None:
    name = thread()
    body = {"thread": name, "text": "once", "id": "msg-1"}
    first = api.client.post(MESSAGES, json=body).json()
    retried = api.client.post(MESSAGES, json=body).json()
    assert (retried["sessionId"], retried["deliveryId"]) == (first["sessionId"], first["deliveryId"])
    events = api.wait_for(first["sessionId"], "session.waiting")
    assert [e["data"]["message"] for e in events if e["type"] == "message.received"] == ["once"]


def test_end_and_cancel_by_thread(api: Harness) -> None:
    name = thread()
    assert api.client.post(f"/webhook/threads/{name}/cancel").json() == {"ok": True, "status": "no_active_turn"}
    assert api.client.post(f"/webhook/threads/{name}/end").json() == {"ok": True, "status": "no_active_session"}
    sid = api.client.post(MESSAGES, json={"thread": name, "text": "/delay 100\n/reply slow"}).json()["sessionId"]
    api.wait_for(sid, "step.started")
    assert api.client.post(f"/webhook/threads/{name}/cancel").json() == {
        "ok": True,
        "status": "accepted",
        "sessionId": sid,
    }
    api.wait_for(sid, "turn.cancelled")
    ended = api.client.post(f"/webhook/threads/{name}/end").json()
    assert ended == {"ok": True, "status": "reset", "previousSessionId": sid}
    fresh = api.client.post(MESSAGES, json={"thread": name, "text": "again"}).json()
    assert fresh["created"] is True and fresh["sessionId"] != sid


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (b"", "invalid_json"),
        (json.dumps({"text": "no thread"}).encode(), "invalid_request"),
        (json.dumps({"thread": "", "text": "x"}).encode(), "invalid_request"),
        (json.dumps({"thread": "t", "text": ""}).encode(), "invalid_request"),
        (json.dumps({"thread": "t", "text": "x", "id": 5}).encode(), "invalid_request"),
        (json.dumps({"thread": "t", "text": "x", "id": ""}).encode(), None),
    ],
)
def test_bad_webhook_bodies_are_4xx_json(api: Harness, body: bytes, code: str | None) -> None:
    response = api.client.post(MESSAGES, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    payload = response.json()
    assert payload["ok"] is False and payload["error"]
    if code is not None:
        assert payload["code"] == code


def test_a_channel_path_with_another_method_is_405(api: Harness) -> None:
    response = api.client.get(MESSAGES)
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"


def test_the_template_channel_needs_the_token_under_eve_start(
    agent: RuntimeAgent, manifest: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVE_AUTH_TOKEN", "s3cret")
    with harness(agent, manifest, mode="production", auth=BearerTokenAuth("s3cret")) as prod:
        refused = prod.client.post(MESSAGES, json={"thread": thread(), "text": "hi"})
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        wrong = prod.client.post(MESSAGES, json={"thread": thread(), "text": "hi"}, headers=_bearer("nope"))
        assert wrong.status_code == 401 and wrong.json()["ok"] is False
        accepted = prod.client.post(MESSAGES, json={"thread": thread(), "text": "hi"}, headers=_bearer("s3cret"))
        assert accepted.status_code == 202, accepted.text


@pytest.mark.parametrize(
    "tokens", [["s3cret", "nope"], ["nope", "s3cret"], ["s3cret"] * 2], ids=["right first", "wrong first", "twice"]
)
def test_two_authorization_headers_are_refused_on_channel_routes(
    agent: RuntimeAgent, manifest: Manifest, monkeypatch: pytest.MonkeyPatch, tokens: list[str]
) -> None:
    """Not the first one, not the last one: 400, as on `/eve/v1` (one parser for both)."""
    monkeypatch.setenv("EVE_AUTH_TOKEN", "s3cret")
    headers = [(b"authorization", f"Bearer {token}".encode()) for token in tokens]
    with harness(agent, manifest, mode="production", auth=BearerTokenAuth("s3cret")) as prod:
        for method, path in [("POST", MESSAGES), ("GET", f"/webhook/threads/{thread()}/replies")]:
            response = prod.client.request(method, path, json={"thread": thread(), "text": "hi"}, headers=headers)
            assert response.status_code == 400, response.text
            assert response.json()["code"] == "duplicate_authorization"
            assert "s3cret" not in response.text


def test_two_authorization_headers_are_refused_under_eve_dev_too(api: Harness) -> None:
    headers = [(b"authorization", b"Bearer a"), (b"authorization", b"Bearer b")]
    response = api.client.post(MESSAGES, json={"thread": thread(), "text": "hi"}, headers=headers)
    assert (response.status_code, response.json()["code"]) == (400, "duplicate_authorization")
    assert api.client.post(MESSAGES, json={"thread": thread(), "text": "hi"}).status_code == 202


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_info_lists_the_channel_routes(api: Harness, compiled_app: CompiledApp) -> None:
    routes = api.client.get("/eve/v1/info").json()["channels"]["routes"]
    custom = [(r["method"], r["urlPath"]) for r in routes if r["name"] == "webhook"]
    assert custom == [
        ("POST", "/webhook/messages"),
        ("GET", "/webhook/threads/:thread/replies"),
        ("POST", "/webhook/threads/:thread/cancel"),
        ("POST", "/webhook/threads/:thread/end"),
    ]
    assert {r["adapterKind"] for r in routes if r["name"] == "webhook"} == {"custom"}
    assert routes[0]["logicalPath"] == "channels/webhook.py" and routes[0]["owner"] == {"kind": "application"}
    assert any(r["name"] == "eve" and r["urlPath"] == "/eve/v1/session" for r in routes)
    assert cli_info(compiled_app)["channels"]["routes"] == routes


# -- stranded holder, replaced through the channel -------------------------------------------------


def test_a_stranded_holder_is_replaced_through_the_channel(api: Harness) -> None:
    name = thread()

    async def stranded() -> str:
        record = dataclasses.replace(api.runtime.new_record(), eve_version="0.0.1")
        session, _ = await api.store.create_session(record)
        await api.store.claim_address(session.id, f"webhook:{name}")
        await write_events(api.store, session.id, [("session.started", {"runtime": {"eveVersion": "0.0.1"}})])
        return session.id

    old = api.call(stranded)
    response = api.client.post(MESSAGES, json={"thread": name, "text": "still there?"})
    assert response.status_code == 202, response.text
    new = response.json()["sessionId"]
    assert new != old and response.json()["created"] is True
    events = api.wait_for(new, "session.waiting")
    assert events[0]["type"] == "session.started" and events[0]["data"]["predecessor"] == {"sessionId": old}
    assert replies(api, name)[0]["sessionId"] == new
    assert api.events(old)[-1]["type"] == "session.failed"
    assert api.events(old)[-1]["data"]["details"] == {"trigger": "message"}


# -- an authored channels/eve.py -------------------------------------------------------------------

EVE_WITH_TOKEN = """
from eve_runtime.authoring.channels import bearer_token, eve_channel

channel = eve_channel(auth=[bearer_token(token="team-token")])
"""


def test_a_replaced_eve_channel_uses_its_own_auth(app_with: Any) -> None:
    compiled = app_with({"agent/channels/eve.py": EVE_WITH_TOKEN})
    assert compiled.ok, compiled.diagnostics
    with harness(compiled.root, compiled.manifest) as dev:  # eve dev, a local client: local_dev() is not in the chain
        assert dev.client.get("/eve/v1/health").status_code == 200  # always open
        refused = dev.client.get("/eve/v1/info")
        assert refused.status_code == 401 and refused.json()["code"] == "unauthorized"
        assert refused.headers["www-authenticate"] == "Bearer"
        assert dev.client.post("/eve/v1/session", json={"message": "hi"}, headers=_bearer("wrong")).status_code == 401
        created = dev.client.post("/eve/v1/session", json={"message": "hi"}, headers=_bearer("team-token"))
        assert created.status_code == 202, created.text
        info = dev.client.get("/eve/v1/info", headers=_bearer("team-token")).json()
        eve_routes = [r for r in info["channels"]["routes"] if r["name"] == "eve"]
        assert eve_routes and all(r["logicalPath"] == "channels/eve.py" for r in eve_routes)
        assert info["channels"]["shadowed"][0]["winnerSourceId"] == eve_routes[0]["sourceId"]
        # the custom channel keeps its own chain (local_dev admits this local client)
        assert dev.client.post(MESSAGES, json={"thread": thread(), "text": "hi"}).status_code == 202


def test_a_disabled_eve_channel_serves_no_eve_route(app_with: Any) -> None:
    compiled = app_with(
        {"agent/channels/eve.py": "from eve_runtime.channels import disable_channel\n\noff = disable_channel()\n"}
    )
    assert compiled.ok, compiled.diagnostics
    with harness(compiled.root, compiled.manifest) as dev:
        for method, path in [("GET", "/eve/v1/health"), ("GET", "/eve/v1/info"), ("POST", "/eve/v1/session")]:
            response = dev.client.request(method, path)
            assert response.status_code == 404 and response.json()["code"] == "not_found", path
        assert dev.client.post(MESSAGES, json={"thread": thread(), "text": "hi"}).status_code == 202


CATCH_ALL = """
from eve_runtime.authoring.channels import POST, define_channel


def grab(request, ctx):
    return {"grabbed": ctx.params}


channel = define_channel(routes=[POST("/{a}/{b}/{c}", grab)])
"""


def test_a_channel_pattern_never_takes_over_eves_routes(app_with: Any) -> None:
    compiled = app_with({"agent/channels/grabby.py": CATCH_ALL})
    assert compiled.ok, compiled.diagnostics
    warned = [d for d in compiled.diagnostics if d.code == "compile/channel-route-shadows-eve"]
    assert warned and warned[0].severity == "warning"
    with harness(compiled.root, compiled.manifest) as dev:
        created = dev.client.post("/eve/v1/session", json={"message": "hi"})
        assert created.status_code == 202 and created.json()["sessionId"], created.text
        assert dev.client.post("/x/y/z").json() == {"grabbed": {"a": "x", "b": "y", "c": "z"}}


IMPORTS = "from eve_runtime.channels import POST, define_channel, disable_channel\n"
MISTAKES = [
    ({"agent/channels/eve.py": IMPORTS + "c = define_channel()\n"}, "compile/definition-missing"),
    ({"agent/channels/other.py": IMPORTS + "c = disable_channel()\n"}, "compile/definition-missing"),
    (
        {"agent/channels/copy.py": IMPORTS + "c = define_channel(routes=[POST('/webhook/messages', print)])\n"},
        "compile/channel-route-collision",
    ),
    ({"agent/channels/bad.py": IMPORTS + "POST('/eve/v1/mine', print)\n"}, "compile/definition-invalid"),
]


@pytest.mark.parametrize(("files", "code"), MISTAKES)
def test_channel_mistakes_are_diagnostics(app_with: Any, files: dict[str, str], code: str) -> None:
    compiled = app_with(files)
    assert not compiled.ok
    assert code in [d.code for d in compiled.diagnostics]


# -- dispatch order --------------------------------------------------------------------------------

ORDERED = {
    "agent/channels/ordered.py": """
from eve_runtime.authoring.channels import POST, define_channel
from tests.hook_ledger import LEDGER


async def receive(request, ctx):
    body = await ctx.json()
    sent = await ctx.from_(body["thread"]).send(body["text"])
    return {"sessionId": sent.session_id}


async def seen(data, channel):
    LEDGER.append(("channel", channel.type, channel.address))
    if channel.type == "session.started":
        await channel.alias("second-address")


channel = define_channel(routes=[POST("/ordered", receive)], events={"*": seen})
""",
    "agent/hooks/after.py": """
from eve_runtime import define_hook
from tests.hook_ledger import LEDGER

def seen(event, ctx):
    LEDGER.append(("hook", event["type"], ctx.channel.continuation_token if ctx.channel else None))
    assert ctx.channel is None or ctx.channel.kind == "ordered"


hook = define_hook({"*": seen})
""",
}


def test_the_channel_handler_runs_before_the_hooks_of_each_event(app_with: Any) -> None:
    hook_ledger.LEDGER.clear()
    compiled = app_with(ORDERED)
    assert compiled.ok, compiled.diagnostics
    with harness(compiled.root, compiled.manifest) as dev:
        sid = dev.client.post("/ordered", json={"thread": "a", "text": "hi"}).json()["sessionId"]
        events = dev.wait_for(sid, "session.waiting")
        dev.call(dev.runtime.hooks.settle, sid)
        # the alias an event handler added reaches the same session
        again = dev.client.post("/ordered", json={"thread": "second-address", "text": "again"}).json()
        assert again["sessionId"] == sid
        # an HTTP session has no address: the channel never sees it
        other = dev.create("by id")
        dev.wait_for(other, "session.waiting")
        dev.call(dev.runtime.hooks.settle, other)
    ledger = [entry for entry in hook_ledger.LEDGER if entry[0] == "channel" or entry[1] in {e["type"] for e in events}]
    expected = [pair for e in events for pair in (("channel", e["type"], "a"), ("hook", e["type"], "a"))]
    assert ledger[: len(expected)] == expected
    assert ("hook", "session.started", None) in hook_ledger.LEDGER  # the session started by id has no channel
    assert sum(1 for entry in hook_ledger.LEDGER if entry[0] == "channel") >= len(events)
    hook_ledger.LEDGER.clear()


BEFORE_RESOLVERS = {
    "agent/channels/first.py": """
from eve_runtime.authoring.channels import POST, define_channel
from tests.hook_ledger import LEDGER


async def receive(request, ctx):
    return {"sessionId": (await ctx.from_("x").send("hi")).session_id}


channel = define_channel(
    routes=[POST("/first", receive)], events={"session.started": lambda data, channel: LEDGER.append("channel")}
)
""",
    "agent/instructions/later.py": """
from eve_runtime import define_dynamic
from tests.hook_ledger import LEDGER


def resolve(ctx):
    LEDGER.append("resolver")
    return None


later = define_dynamic(resolve)
""",
}


def test_the_channel_handler_runs_before_the_dynamic_resolvers_of_the_event(app_with: Any) -> None:
    hook_ledger.LEDGER.clear()
    compiled = app_with(BEFORE_RESOLVERS)
    assert compiled.ok, compiled.diagnostics
    with harness(compiled.root, compiled.manifest) as dev:
        sid = dev.client.post("/first").json()["sessionId"]
        dev.wait_for(sid, "session.waiting")
    assert hook_ledger.LEDGER[:2] == ["channel", "resolver"]
    hook_ledger.LEDGER.clear()


def test_a_thread_continues_its_session_after_a_server_restart(
    agent: RuntimeAgent, manifest: Manifest, tmp_path: Path
) -> None:
    """A real uvicorn on the local world's SQLite store, stopped and started again on the same data."""
    name = thread()
    data = tmp_path / "workflow-data"
    with LiveServer(agent, manifest, store=SqliteStore(data)) as server, httpx.Client(base_url=server.url) as http:
        before = http.post(MESSAGES, json={"thread": name, "text": "before", "id": "m1"}).json()
        assert before["created"] is True
        server.call(server.store.wait_for_events, before["sessionId"], 0, 5.0)
    with LiveServer(agent, manifest, store=SqliteStore(data)) as server, httpx.Client(base_url=server.url) as http:
        retried = http.post(MESSAGES, json={"thread": name, "text": "before", "id": "m1"}).json()
        assert (retried["sessionId"], retried["deliveryId"]) == (before["sessionId"], before["deliveryId"])
        after = http.post(MESSAGES, json={"thread": name, "text": "after"}).json()
        assert after["sessionId"] == before["sessionId"] and after["created"] is False
