"""Channel route handlers: turn policies, fixed session handles, refused operations and failing handlers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.authoring.channels import MAX_ADDRESS_LENGTH
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.sessions.addresses import AddressContended
from eve_runtime.store.base import AddressLimitReached
from tests.server.support import Harness, harness, scaffold_app

CHANNEL = """
from eve_runtime.authoring.channels import GET, POST, define_channel


async def send(request, ctx):
    body = await ctx.json()
    sent = await ctx.from_(body["thread"]).send(body["text"], turn_policy=body.get("policy"))
    return {"sessionId": sent.session_id, "created": sent.created}, 202


async def alias(request, ctx):
    body = await ctx.json()
    return {"sessionId": await ctx.from_(body["thread"]).alias(body["alias"])}


async def resolve(request, ctx):
    return {"sessionId": await ctx.resolve_session(ctx.params["thread"])}


async def attached(request, ctx):
    body = await ctx.json()
    session = ctx.attach_session(body["sessionId"])
    return {"deliveryId": await session.send(body["text"])}


async def respond(request, ctx):
    return {"sent": (await ctx.from_("nobody").respond([{"requestId": "r", "optionId": "approve"}])).session_id}


def boom(request, ctx):
    raise KeyError("a bug in the handler")


def odd(request, ctx):
    return 42


async def number(request, ctx):
    return {"n": int((await request.body()).decode())}


channel = define_channel(
    turn_policy="queue",
    routes=[
        POST("/t/send", send),
        POST("/t/alias", alias),
        GET("/t/resolve/:thread", resolve),
        POST("/t/attached", attached),
        POST("/t/respond", respond),
        GET("/t/boom", boom),
        GET("/t/odd", odd),
        POST("/t/number", number),
    ],
)
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CompiledApp]:
    root = scaffold_app(tmp_path_factory.mktemp("routes") / "app")
    (root / "agent/channels/testing.py").write_text(CHANNEL)
    built = compile_app(root, write=False)
    assert built.ok, built.diagnostics
    yield built
    built.loader.release()


@pytest.fixture
def dev(compiled: CompiledApp) -> Iterator[Harness]:
    assert compiled.root is not None
    with harness(compiled.root, compiled.manifest) as h:
        yield h


def turn_of_second_message(dev: Harness, thread: str, policy: str | None) -> str:
    """Send a slow first message, then a second one with `policy`; the turn the second one joined."""
    first = dev.client.post("/t/send", json={"thread": thread, "text": "/delay 150\n/reply slow", "policy": "steer"})
    sid = first.json()["sessionId"]
    dev.wait_for(sid, "step.started")
    second = dev.client.post("/t/send", json={"thread": thread, "text": "/reply second", "policy": policy})
    assert second.json() == {"sessionId": sid, "created": False}
    events = dev.wait_for(sid, "message.received", count=2)
    return str([e for e in events if e["type"] == "message.received"][1]["data"]["turnId"])


def test_the_channel_default_turn_policy_queues(dev: Harness) -> None:
    assert turn_of_second_message(dev, "queued", None) == "turn_1"


def test_a_send_overrides_the_turn_policy(dev: Harness) -> None:
    assert turn_of_second_message(dev, "steered", "steer") == "turn_0"


def test_a_bad_turn_policy_is_400(dev: Harness) -> None:
    response = dev.client.post("/t/send", json={"thread": "x", "text": "hi", "policy": "later"})
    assert response.status_code == 400 and response.json()["ok"] is False


def test_aliases_resolve_and_conflicts_are_409(dev: Harness) -> None:
    sid = dev.client.post("/t/send", json={"thread": "one", "text": "hi"}).json()["sessionId"]
    other = dev.client.post("/t/send", json={"thread": "two", "text": "hi"}).json()["sessionId"]
    assert dev.client.post("/t/alias", json={"thread": "one", "alias": "uno"}).json() == {"sessionId": sid}
    assert dev.client.get("/t/resolve/uno").json() == {"sessionId": sid}
    assert dev.client.get("/t/resolve/nobody").json() == {"sessionId": None}
    taken = dev.client.post("/t/alias", json={"thread": "two", "alias": "uno"})
    assert taken.status_code == 409 and taken.json()["code"] == "address_in_use"
    assert dev.client.get("/t/resolve/two").json() == {"sessionId": other}
    assert dev.client.post("/t/alias", json={"thread": "nobody", "alias": "x"}).json() == {"sessionId": None}
    empty = dev.client.post("/t/alias", json={"thread": "one", "alias": ""})
    assert empty.status_code == 400 and empty.json()["code"] == "invalid_address"


def test_an_overlong_address_is_refused_everywhere(dev: Harness) -> None:
    too_long = "x" * (MAX_ADDRESS_LENGTH + 1)
    sid = dev.client.post("/t/send", json={"thread": "long", "text": "hi"}).json()["sessionId"]
    refused = dev.client.post("/t/alias", json={"thread": "long", "alias": too_long})
    assert refused.status_code == 400 and refused.json() == {
        "ok": False,
        "error": f"A channel address may be at most {MAX_ADDRESS_LENGTH} characters.",
        "code": "invalid_address",
    }
    with pytest.raises(ValueError, match="at most"):  # what a channel event handler's alias() reaches
        dev.call(dev.runtime.hooks.alias, sid, "testing", too_long)  # type: ignore[arg-type]
    assert dev.call(dev.runtime.store.address_holder, f"testing:{too_long}") is None


def test_refusals_are_4xx_or_503_json_never_500(dev: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = dev.client.post("/t/send", json={"thread": "full", "text": "hi"}).json()["sessionId"]

    async def full(session_id: str, address: str) -> str:
        raise AddressLimitReached(session_id)

    monkeypatch.setattr(dev.store, "claim_address", full)
    limited = dev.client.post("/t/alias", json={"thread": "full", "alias": "more"})
    assert limited.status_code == 409
    assert limited.json() == {"ok": False, "error": str(AddressLimitReached(sid)), "code": "address_limit_reached"}

    async def contended(*args: Any, **kwargs: Any) -> Any:
        raise AddressContended("The session holding 'testing:busy' kept changing; try again.")

    monkeypatch.setattr(dev.runtime.addresses, "continue_or_create", contended)
    busy = dev.client.post("/t/send", json={"thread": "busy", "text": "hi"})
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert busy.json()["ok"] is False and busy.json()["code"] == "address_contended"

    for body, code in [(b"\xff\xfe", "invalid_body"), (b"twelve", "bad_request")]:
        refused = dev.client.post("/t/number", content=body)
        assert refused.status_code == 400 and refused.json()["code"] == code, refused.text
        assert set(refused.json()) == {"ok", "error", "code"}
    assert dev.client.post("/t/number", content=b"12").json() == {"n": 12}


def test_a_fixed_session_handle_never_follows_an_address(dev: Harness) -> None:
    sid = dev.client.post("/t/send", json={"thread": "fixed", "text": "hi"}).json()["sessionId"]
    assert dev.client.post("/t/attached", json={"sessionId": sid, "text": "more"}).status_code == 200
    gone = dev.client.post("/t/attached", json={"sessionId": "wrun_unknown", "text": "more"})
    assert gone.status_code == 409 and gone.json()["code"] == "session_not_active"


def test_answers_to_an_unheld_address_start_nothing(dev: Harness) -> None:
    response = dev.client.post("/t/respond")
    assert response.status_code == 409 and response.json()["code"] == "session_not_active"


@pytest.mark.parametrize("path", ["/t/boom", "/t/odd"])
def test_a_failing_handler_is_a_logged_500_json(dev: Harness, path: str, caplog: pytest.LogCaptureFixture) -> None:
    response = dev.client.get(path)
    assert response.status_code == 500
    body = response.json()
    assert body["ok"] is False and body["code"] == "internal_error" and body["errorId"]
    assert "Traceback" not in response.text
    assert body["errorId"] in caplog.text


def test_unknown_paths_still_reach_eve(dev: Harness, tmp_path: Path) -> None:
    response = dev.client.get("/t/nothing-here")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert dev.client.get("/eve/v1/health").status_code == 200
