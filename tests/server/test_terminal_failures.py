"""Failures that end the session: `turn.failed` with `terminal: true`, then `session.failed` (seeds: sessions page)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eve_runtime.messages import Message
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.models.base import ModelError
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from tests.server.support import Harness, harness

NOT_ACTIVE = {"code": "session_not_active", "error": "The session is no longer active.", "ok": False}


def refusing(status: int) -> FunctionModel:
    """A model whose provider refuses every request with this HTTP status."""

    def respond(messages: list[Message], info: FunctionInfo) -> str:
        raise ModelError("The model 'openai/x' failed: invalid api key", retryable=False, status_code=status)

    return FunctionModel(respond)


@pytest.fixture
def refused(agent: RuntimeAgent, manifest: Manifest) -> Iterator[Harness]:
    with harness(agent, manifest, models={"test": refusing(401)}) as h:
        yield h


def test_a_provider_refusing_the_request_ends_the_session(refused: Harness) -> None:
    response = refused.client.post("/eve/v1/session", json={"message": "hi"})
    sid = response.json()["sessionId"]
    events = refused.wait_for(sid, "session.failed")
    assert [e["type"] for e in events] == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "step.failed",
        "turn.failed",
        "session.failed",
    ]
    step_failed, turn_failed, session_failed = (e["data"] for e in events[-3:])
    assert step_failed["code"] == "MODEL_CALL_FAILED"
    assert turn_failed["terminal"] is True
    assert (turn_failed["code"], turn_failed["message"]) == ("MODEL_CALL_FAILED", step_failed["message"])
    assert list(session_failed) == ["code", "message", "details", "sessionId", "usage"]
    assert session_failed["code"] == "MODEL_CALL_FAILED" and "invalid api key" in session_failed["message"]
    assert session_failed["details"] == {"retryable": False, "statusCode": 401, "semanticErrorId": "model-call-failed"}
    assert session_failed["sessionId"] == sid
    assert session_failed["usage"] == {"cacheReadTokens": 0, "cacheWriteTokens": 0, "inputTokens": 0, "outputTokens": 0}
    # the session is over: a live follow replays and closes, nothing more is accepted
    live = refused.client.get(f"/eve/v1/session/{sid}/stream")
    assert live.status_code == 200 and live.content.count(b"\n") == len(events) + 1
    assert refused.client.post(f"/eve/v1/session/{sid}", json={"message": "again"}).json() == NOT_ACTIVE
    record = refused.call(refused.store.get_session, sid)
    assert record is not None and record.status == "failed"


@pytest.mark.parametrize("status", [429, 500, None])
def test_other_failures_leave_the_session_open(agent: RuntimeAgent, manifest: Manifest, status: int | None) -> None:
    def respond(messages: list[Message], info: FunctionInfo) -> str:
        if info.call_count == 1:
            raise ModelError("busy or odd", retryable=False, status_code=status)
        return "back"

    with harness(agent, manifest, models={"test": FunctionModel(respond)}) as h:
        sid = h.create("hi")
        events = h.wait_for(sid, "session.waiting")
        failed = next(e for e in events if e["type"] == "turn.failed")["data"]
        assert failed["terminal"] is False and "session.failed" not in [e["type"] for e in events]
        assert h.client.post(f"/eve/v1/session/{sid}", json={"message": "again"}).status_code == 202
        events = h.wait_for(sid, "session.waiting", count=2)
        assert [e["data"]["message"] for e in events if e["type"] == "message.completed"] == ["back"]
