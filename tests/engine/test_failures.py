"""Model failures: errors not retried, provider retries (announced by `step.retrying`), STEP_FAILED, content filter."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.messages import Message
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.models.base import Finish, ModelError
from eve_runtime.sessions.runtime import RuntimeOptions
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
            raise ModelError("overloaded", retryable=True, status_code=529, kind="model-server-error")
        return "finally"

    h = await make_harness(tmp_path, models={"test": FunctionModel(respond)})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert len(of_type(events, "step.started")) == 1
    assert last_reply(events) == "finally"
    retries = [e["data"] for e in of_type(events, "step.retrying")]
    assert [(r["attempt"], r["maxAttempts"]) for r in retries] == [(2, 4), (3, 4)]
    assert retries[0]["code"] == "MODEL_CALL_FAILED" and "overloaded" in retries[0]["message"]
    assert retries[0]["details"] == {"semanticErrorId": "model-server-error", "retryable": True, "statusCode": 529}
    assert retries[0]["delayMs"] == 0  # the harness waits no time between attempts
    # Each retry is announced before it runs: between the two calls' step events, never after the answer.
    kinds = types(events)
    assert kinds.index("step.retrying") < kinds.index("message.appended")


async def test_a_model_call_failing_every_attempt_fails_with_its_kind_not_step_failed(tmp_path: Path) -> None:
    error = ModelError("down", retryable=True, status_code=503, kind="model-server-error", provider="p")
    model = FunctionModel(lambda messages, info: (_ for _ in ()).throw(error))
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert len(of_type(events, "step.started")) == 1  # the step is not run again: its attempts were the call's
    assert model.call_count == 4
    assert [e["data"]["attempt"] for e in of_type(events, "step.retrying")] == [2, 3, 4]
    for kind in ("step.failed", "turn.failed"):
        data = of_type(events, kind)[0]["data"]
        assert (data["code"], data["message"]) == ("MODEL_CALL_FAILED", "down")
        assert data["details"] == {
            "semanticErrorId": "model-server-error",
            "retryable": True,
            "statusCode": 503,
            "provider": "p",
            "attempts": 4,
        }
    assert events[-1]["type"] == "session.waiting"


async def test_a_failure_a_retry_cannot_cure_is_not_retried(tmp_path: Path) -> None:
    error = ModelError("no key", retryable=False, kind="model-api-key-missing", variable="OPENAI_API_KEY")
    model = FunctionModel(lambda messages, info: (_ for _ in ()).throw(error))
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert model.call_count == 1
    assert "step.retrying" not in types(events)
    details = of_type(events, "turn.failed")[0]["data"]["details"]
    assert details == {"semanticErrorId": "model-api-key-missing", "retryable": False, "envVar": "OPENAI_API_KEY"}


async def test_a_cancel_stops_the_wait_before_a_retry(tmp_path: Path) -> None:
    model = FunctionModel(lambda messages, info: (_ for _ in ()).throw(ModelError("slow down", retryable=True)))
    h = await make_harness(
        tmp_path, models={"test": model}, options=RuntimeOptions(provider_backoff=600, step_retry_delay=0)
    )
    sid = await h.create("hi")
    await h.wait_for(sid, lambda events: "step.retrying" in types(events))
    await h.rt.cancel(sid)
    events = await h.turns(sid, 1)
    await h.stop()
    assert model.call_count == 1
    assert types(events)[-2:] == ["turn.cancelled", "session.waiting"]
    assert of_type(events, "step.retrying")[0]["data"]["delayMs"] >= 480_000  # 600 s, give or take a fifth


async def test_every_failed_turn_is_logged_with_its_cause(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    error = ModelError("the key was refused", retryable=False, kind="model-authentication-failed", status_code=401)
    model = FunctionModel(lambda messages, info: (_ for _ in ()).throw(error))
    h = await make_harness(tmp_path, models={"test": model})
    with caplog.at_level(logging.WARNING, logger="eve"):
        sid = await h.create("hi")
        await h.turns(sid, 1)
    await h.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "eve.actor" and "failed" in r.getMessage()]
    assert len(lines) == 1
    assert f"session {sid}: turn_0 failed: MODEL_CALL_FAILED: the key was refused" in lines[0]
    assert "'semanticErrorId': 'model-authentication-failed'" in lines[0] and "'statusCode': 401" in lines[0]


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
    retries = [e["data"] for e in of_type(events, "step.retrying")]
    assert [(r["attempt"], r["maxAttempts"], r["code"]) for r in retries] == [(n, 4, "STEP_FAILED") for n in (2, 3, 4)]
    assert "ZeroDivisionError: oops" in retries[0]["message"]


class _Unready(FunctionModel):
    """A model whose preflight refuses every request; asking its context window is a test failure."""

    def preflight(self, request: object) -> None:
        raise ModelError("set KEY", retryable=False, kind="model-api-key-missing", variable="KEY")

    async def context_window_tokens(self) -> int | None:
        raise AssertionError("compaction was consulted before the preflight")


async def test_a_model_refusing_in_preflight_fails_the_step_before_compaction_or_a_call(tmp_path: Path) -> None:
    model = _Unready(lambda messages, info: "never")
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert model.call_count == 0
    assert types(events)[-4:] == ["step.started", "step.failed", "turn.failed", "session.waiting"]
    failed = of_type(events, "turn.failed")[0]["data"]
    assert (failed["code"], failed["message"]) == ("MODEL_CALL_FAILED", "set KEY")
    assert failed["details"] == {"semanticErrorId": "model-api-key-missing", "retryable": False, "envVar": "KEY"}
