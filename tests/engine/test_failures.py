"""Model failures: non-retryable errors, provider retries, STEP_FAILED, content filter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.messages import Message
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.models.base import Finish, ModelError
from tests.harness import Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio


async def test_a_non_retryable_model_error_fails_the_turn_not_the_session(harness: Harness) -> None:
    sid = await harness.create("/fail the provider said no")
    events = await harness.turns(sid, 1)
    assert types(events)[-4:] == ["step.started", "step.failed", "turn.failed", "session.waiting"]
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "MODEL_CALL_FAILED" and failed["terminal"] is False
    assert "the provider said no" in failed["message"]
    assert of_type(events, "step.failed")[0]["data"]["details"]["retryable"] is False
    await harness.send(sid, "hello again")
    events = await harness.turns(sid, 2)
    assert last_reply(events) == "echo: hello again"


async def test_retryable_errors_are_retried_inside_the_step(tmp_path: Path) -> None:
    def respond(messages: list[Message], info: FunctionInfo) -> str:
        if info.call_count < 3:
            raise ModelError("overloaded", retryable=True, status_code=529)
        return "finally"

    h = await make_harness(tmp_path, models={"test": FunctionModel(respond)})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert len(of_type(events, "step.started")) == 1
    assert last_reply(events) == "finally"


async def test_a_step_failing_every_attempt_ends_with_step_failed(tmp_path: Path) -> None:
    model = FunctionModel(lambda messages, info: (_ for _ in ()).throw(ModelError("down", retryable=True)))
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    started = of_type(events, "step.started")
    assert len(started) == 4 and {e["data"]["stepIndex"] for e in started} == {0}
    assert model.call_count == 4 * 3  # four step attempts of three provider attempts each
    assert of_type(events, "turn.failed")[0]["data"]["code"] == "STEP_FAILED"
    assert of_type(events, "step.failed")[0]["data"]["code"] == "STEP_FAILED"
    assert events[-1]["type"] == "session.waiting"


async def test_content_filter(tmp_path: Path) -> None:
    async def stream(messages: list[Message], info: FunctionInfo) -> AsyncIterator[str | Finish]:
        yield "some text "
        yield Finish(reason="content-filter")

    h = await make_harness(tmp_path, models={"test": FunctionModel(stream_function=stream)})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert "message.completed" not in types(events)
    assert types(events)[-4:] == ["message.appended", "step.failed", "turn.failed", "session.waiting"]
    for kind in ("step.failed", "turn.failed"):
        data = of_type(events, kind)[0]["data"]
        assert data["code"] == "MODEL_CALL_FAILED"
        assert data["details"] == {
            "semanticErrorId": "model-response-content-filtered",
            "finishReason": "content-filter",
        }


async def test_a_bug_in_a_step_is_retried_then_step_failed(tmp_path: Path) -> None:
    def respond(messages: list[Message], info: FunctionInfo) -> str:
        raise ZeroDivisionError("oops")

    h = await make_harness(tmp_path, models={"test": FunctionModel(respond)})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "STEP_FAILED" and "ZeroDivisionError" in failed["message"]
    assert len(of_type(events, "step.started")) == 4
