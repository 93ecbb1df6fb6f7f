"""Many people on one session: the caller's principal comes from the auth chain, and only the turn's caller steers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.server.auth import BearerTokenAuth
from tests.client.recordings import ALERT
from tests.server.support import Harness, harness, scaffold_app

PEOPLE_CHANNEL = """
from eve_runtime.authoring.channels import Principal, eve_channel

PEOPLE = {"Bearer alice-0123456789abcdef": "alice", "Bearer bob-0123456789abcdef": "bob"}


def people(request):
    name = PEOPLE.get(request.headers.get("authorization", ""))
    return Principal(name, "user", "people") if name else None


channel = eve_channel(auth=[people])
"""
WHOAMI = '''
from eve_runtime import ToolContext, tool


@tool
def whoami(ctx: ToolContext) -> str:
    """Who this turn works for."""
    return f"working for {ctx.session.principal_id}"
'''
"""A tool of the template's `forecaster` subagent: the principal its turn runs as."""
ALICE = {"authorization": "Bearer alice-0123456789abcdef"}
BOB = {"authorization": "Bearer bob-0123456789abcdef"}


@pytest.fixture(scope="module")
def people_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CompiledApp]:
    root = scaffold_app(tmp_path_factory.mktemp("people") / "app")
    (root / "agent/channels/eve.py").write_text(PEOPLE_CHANNEL)
    (root / "agent/subagents/forecaster/tools").mkdir()
    (root / "agent/subagents/forecaster/tools/whoami.py").write_text(WHOAMI)
    compiled = compile_app(root, write=False)
    assert compiled.ok and compiled.root is not None, compiled.diagnostics
    yield compiled
    compiled.loader.release()


@pytest.fixture
def people(people_app: CompiledApp) -> Iterator[Harness]:
    assert people_app.root is not None
    with harness(people_app.root, people_app.manifest) as h:
        h.client.headers.update(ALICE)  # reads (the harness's) as alice; every send names its person
        yield h


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events if e["type"] != "message.appended"]


def parked(h: Harness, headers: dict[str, str]) -> tuple[str, str]:
    """A session whose turn (started by `headers`' person) waits on an approval; its id and the request's."""
    created = h.client.post("/eve/v1/session", json={"message": ALERT}, headers=headers)
    assert created.status_code == 202, created.text
    session_id = created.json()["sessionId"]
    events = h.wait_for(session_id, "turn.waiting")
    (requested,) = [e for e in events if e["type"] == "input.requested"]
    return session_id, requested["data"]["requests"][0]["requestId"]


def idle(h: Harness, session_id: str) -> None:
    """Wait until the session's actor handled what it was given and left (a parked turn keeps no actor)."""
    deadline = time.monotonic() + 10
    while session_id in h.runtime.actors:
        assert time.monotonic() < deadline, "the session's actor did not settle"
        time.sleep(0.01)


def send(h: Harness, session_id: str, headers: dict[str, str], **body: Any) -> str:
    answer = h.client.post(f"/eve/v1/session/{session_id}", json=body, headers=headers)
    assert answer.status_code == 202, answer.text
    return str(answer.json()["deliveryId"])


def test_another_persons_message_waits_for_the_turn_instead_of_withdrawing_the_approval(people: Harness) -> None:
    session_id, request_id = parked(people, ALICE)
    before = len(people.events(session_id))
    bobs = send(people, session_id, BOB, message="what is the weather?")
    send(people, session_id, BOB, message="approve")  # an option's name, but not from the turn's person
    idle(people, session_id)  # the actor handled both, and the turn stays parked
    assert kinds(people.events(session_id)[before:]) == []  # nothing withdrawn, nothing approved
    send(people, session_id, ALICE, inputResponses=[{"requestId": request_id, "optionId": "approve"}])
    events = people.wait_for(session_id, "session.waiting", count=2)
    (settled,) = [e for e in events if e["type"] == "approval.settled"]
    assert settled["data"]["responderPrincipalId"] == "alice" and settled["data"]["outcome"] == "approved"
    assert [e["data"]["resolutions"][0]["outcome"] for e in events if e["type"] == "input.resolved"] == ["approved"]
    received = [e for e in events if e["type"] == "message.received"]
    assert [(e["data"]["message"], e["data"]["turnId"]) for e in received] == [
        (ALERT, "turn_0"),
        ("what is the weather?", "turn_1"),  # after alice's turn ended, in a turn of their own
        ("approve", "turn_1"),  # folded into it, in arrival order
    ]
    assert bobs in received[1]["meta"]["deliveryIds"]
    turn_0 = [e for e in events if e["data"].get("turnId") == "turn_0"]
    assert "turn.completed" in kinds(turn_0) and "action.result" in kinds(turn_0)


def test_the_turns_own_caller_still_steers_and_withdraws_the_approval(people: Harness) -> None:
    session_id, _request_id = parked(people, ALICE)
    theirs = send(people, session_id, ALICE, message="never mind", turnPolicy="queue")
    events = people.wait_for(session_id, "session.waiting")
    (resolved,) = [e for e in events if e["type"] == "input.resolved"]
    assert resolved["data"]["resolutions"][0]["outcome"] == "ignored"
    assert theirs in resolved["meta"]["deliveryIds"]
    received = [e for e in events if e["type"] == "message.received"]
    assert [e["data"]["turnId"] for e in received] == ["turn_0", "turn_0"]  # the same turn goes on


def test_anyone_may_answer_an_approval_by_its_id_and_is_named_as_the_responder(people: Harness) -> None:
    session_id, request_id = parked(people, ALICE)
    send(people, session_id, BOB, inputResponses=[{"requestId": request_id, "optionId": "cancel"}])
    events = people.wait_for(session_id, "session.waiting")
    (settled,) = [e for e in events if e["type"] == "approval.settled"]
    assert (settled["data"]["responderPrincipalId"], settled["data"]["outcome"]) == ("bob", "cancelled")


def test_a_stale_answer_from_another_person_waits_too(people: Harness) -> None:
    session_id, _request_id = parked(people, ALICE)
    before = len(people.events(session_id))
    send(people, session_id, BOB, inputResponses=[{"requestId": "req_gone", "optionId": "approve"}])
    idle(people, session_id)
    assert kinds(people.events(session_id)[before:]) == []  # alice's approval is still open


def test_a_body_cannot_claim_to_be_someone(people: Harness) -> None:
    session_id, _request_id = parked(people, ALICE)
    before = len(people.events(session_id))
    forged = {"message": "stop", "auth": {"principalId": "alice"}, "principalId": "alice"}
    send(people, session_id, BOB, **forged)  # unknown fields are accepted and ignored, as eve does
    idle(people, session_id)
    assert kinds(people.events(session_id)[before:]) == []


def test_the_default_authenticators_name_their_one_principal(compiled_app: CompiledApp) -> None:
    assert compiled_app.root is not None
    token = "0123456789abcdef-token"
    for mode, auth, headers, expected in (
        ("development", None, {}, "local-dev"),
        ("production", BearerTokenAuth(token), {"authorization": f"Bearer {token}"}, "token"),
    ):
        with harness(compiled_app.root, compiled_app.manifest, mode=mode, auth=auth) as h:  # type: ignore[arg-type]
            h.client.headers.update(headers)
            session_id, request_id = parked(h, headers)
            send(h, session_id, headers, inputResponses=[{"requestId": request_id, "optionId": "approve"}])
            events = h.wait_for(session_id, "session.waiting")
            (settled,) = [e for e in events if e["type"] == "approval.settled"]
            assert settled["data"]["responderPrincipalId"] == expected, mode


def test_a_subagent_works_for_the_person_whose_turn_called_it(people: Harness) -> None:
    call = '/call forecaster {"message": "/call whoami {}"}'
    created = people.client.post("/eve/v1/session", json={"message": call}, headers=BOB)
    session_id = created.json()["sessionId"]
    events = people.wait_for(session_id, "session.waiting")
    started = next(e["data"] for e in events if e["type"] == "agent.started")
    child = people.events(started["sessionId"])
    (result,) = [e["data"] for e in child if e["type"] == "action.result"]
    assert result["result"]["output"] == "working for bob"  # not the server's default principal
    send(people, session_id, ALICE, message=call)  # the same subagent, now on alice's turn
    events = people.wait_for(session_id, "session.waiting", count=2)
    children = {e["data"]["sessionId"] for e in events if e["type"] == "agent.started"}
    outputs = sorted(
        e["data"]["result"]["output"] for c in children for e in people.events(c) if e["type"] == "action.result"
    )
    assert outputs == ["working for alice", "working for bob"]
