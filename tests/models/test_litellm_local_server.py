"""litellm for real, against a local OpenAI-compatible server (`tests/fixtures/openai_server.py`).

Nothing is scripted inside litellm here: every call goes through `litellm.acompletion`, the
OpenAI SDK and HTTP to a uvicorn on 127.0.0.1, started once for the module. First the model
alone (streaming, a tool call, usage, cost, a 500, a 429, a dropped connection, a missing key,
an unreachable URL), then whole turns through the runtime (the retries each announced by
`step.retrying`, the failures' codes and kinds on `turn.failed`).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

import eve_runtime.models as models
from eve_runtime.messages import UserMessage
from eve_runtime.models import (
    Finish,
    LiteLLMModel,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinition,
    ToolInputDelta,
    Usage,
)
from tests.fixtures.openai_server import LocalOpenAIServer
from tests.harness import last_reply, make_harness, of_type, types

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("real_local_calls"),
    # litellm 1.x reads a pydantic attribute pydantic 2.11 deprecates, on some streamed chunks: harmless
    # (a warning shown once, outside tests), but this suite turns warnings into errors.
    pytest.mark.filterwarnings("ignore:Accessing the 'model_\\w+' attribute on the instance:DeprecationWarning"),
]

WEATHER = ToolDefinition(
    name="get_weather",
    description="Get the current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


async def _stream(
    model_id: str, api_base: str | None, *, tools: list[ToolDefinition] | None = None, text: str = "hi"
) -> tuple[list[ModelEvent], ModelError | None]:
    options: dict[str, Any] = {"api_base": api_base} if api_base else {}
    request = ModelRequest(
        messages=[UserMessage(content=text)], tools=tools or [], settings=ModelSettings(model_options=options)
    )
    events: list[ModelEvent] = []
    try:
        async for event in models.resolve_model(model_id).stream(request):
            events.append(event)
    except ModelError as exc:
        return events, exc
    return events, None


def _text(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# -- the model alone ---------------------------------------------------------------------------


async def test_text_streams_in_pieces_and_ends_with_usage(server: LocalOpenAIServer) -> None:
    events, error = await _stream("openai/echo", server.base_url, text="hello there")
    assert error is None
    assert _text(events) == "echo: hello there"
    assert sum(isinstance(e, TextDelta) for e in events) == 3  # as the server sent them, not in one piece
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert (finish.reason, finish.usage) == ("stop", Usage(input_tokens=12, output_tokens=3))
    assert finish.cost_usd is None  # `echo` has no price
    sent = server.state.requests[-1]
    assert sent.model == "echo" and sent.authorization == "Bearer sk-local-not-a-key"
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}


async def test_a_priced_model_gets_its_cost(server: LocalOpenAIServer) -> None:
    import litellm

    events, error = await _stream("openai/gpt-4o-mini", server.base_url)
    assert error is None
    finish = events[-1]
    assert isinstance(finish, Finish)
    prompt, completion = litellm.cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=12, completion_tokens=3)
    assert finish.cost_usd == pytest.approx(prompt + completion)
    assert finish.cost_usd is not None and finish.cost_usd > 0


async def test_a_tool_call_streams_its_arguments(server: LocalOpenAIServer) -> None:
    events, error = await _stream("openai/tool", server.base_url, tools=[WEATHER])
    assert error is None
    assert events[0] == ToolCallStarted(call_id="call_weather_1", name="get_weather")
    assert "".join(e.delta for e in events if isinstance(e, ToolInputDelta)) == '{"city": "Paris"}'
    finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
    assert [(c.id, c.name, c.arguments) for c in finished] == [("call_weather_1", "get_weather", {"city": "Paris"})]
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool-calls"
    assert server.state.requests[-1].body["tools"][0]["function"]["name"] == "get_weather"


async def test_a_500_is_a_server_error_worth_retrying(server: LocalOpenAIServer) -> None:
    events, error = await _stream("openai/fail-500", server.base_url)
    assert events == [] and error is not None
    assert (error.kind, error.retryable, error.status_code, error.provider) == (
        "model-server-error",
        True,
        500,
        "openai",
    )
    assert len(server.state.requests) == 1  # the SDK's own retries are off: eve's are the only ones


async def test_a_429_is_a_rate_limit_worth_retrying(server: LocalOpenAIServer) -> None:
    _events, error = await _stream("openai/fail-429", server.base_url)
    assert error is not None
    assert (error.kind, error.retryable, error.status_code) == ("model-rate-limited", True, 429)
    assert "Rate limit reached" in str(error)
    assert len(server.state.requests) == 1


async def test_a_connection_dropped_mid_answer_is_retryable_and_names_the_url(server: LocalOpenAIServer) -> None:
    events, error = await _stream("openai/drop", server.base_url)
    assert error is not None
    assert _text(events) != ""  # what came before the drop was streamed
    assert (error.kind, error.retryable) == ("model-connection-lost", True), str(error)
    assert error.url is not None and error.url.startswith(server.base_url)
    assert server.base_url in str(error)


async def test_a_missing_key_fails_before_any_request(
    server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    _events, error = await _stream("openai/echo", server.base_url)
    assert error is not None
    assert (error.kind, error.retryable, error.variable) == ("model-api-key-missing", False, "OPENAI_API_KEY")
    assert "OPENAI_API_KEY" in str(error)
    assert server.state.requests == []


async def test_an_unreachable_url_is_named_and_not_retried() -> None:
    url = _closed_url()
    _events, error = await _stream("openai/echo", url)
    assert error is not None
    assert (error.kind, error.retryable) == ("model-unreachable", False), str(error)
    assert error.url == f"{url}/chat/completions"
    assert f"{url}/chat/completions: connection refused" in str(error)


async def test_openai_base_url_points_openai_models_elsewhere(
    server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    events, error = await _stream("openai/echo", None, text="via the environment")
    assert error is None and _text(events) == "echo: via the environment"
    assert [r.model for r in server.state.requests] == ["echo"]


def test_the_adapter_is_litellm() -> None:
    assert isinstance(models.resolve_model("openai/echo"), LiteLLMModel)


# -- whole turns through the runtime -----------------------------------------------------------


def _agent(model: str, api_base: str) -> dict[str, str]:
    source = (
        "from eve_runtime import define_agent\n\n"
        f"agent = define_agent(model={model!r}, model_options={{'api_base': {api_base!r}}})\n"
    )
    return {"agent/agent.py": source}


async def _turn(tmp_path: Path, model: str, api_base: str, message: str = "hi") -> list[dict[str, Any]]:
    h = await make_harness(tmp_path, _agent(model, api_base))
    try:
        sid = await h.create(message)
        return await h.turns(sid, 1, timeout=60)
    finally:
        await h.stop()


async def test_a_turn_calls_the_tool_and_answers_with_usage(tmp_path: Path, server: LocalOpenAIServer) -> None:
    events = await _turn(tmp_path, "openai/tool", server.base_url, "What is the weather in Paris?")
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]
    result = of_type(events, "action.result")[0]["data"]
    assert result["status"] == "completed" and result["result"]["output"]["city"] == "Paris"
    assert last_reply(events).startswith("The weather is ")
    usage = of_type(events, "session.waiting")[0]["data"]["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (24, 6)  # two calls of 12 in, 3 out


async def test_each_retry_is_announced_then_the_turn_succeeds(tmp_path: Path, server: LocalOpenAIServer) -> None:
    events = await _turn(tmp_path, "openai/flaky-2-announced", server.base_url)
    retries = [e["data"] for e in of_type(events, "step.retrying")]
    assert [(r["attempt"], r["maxAttempts"]) for r in retries] == [(2, 4), (3, 4)]
    details = retries[0]["details"]
    assert (details["semanticErrorId"], details["statusCode"], details["retryable"]) == (
        "model-server-error",
        503,
        True,
    )
    assert "overloaded" in retries[0]["message"]
    assert last_reply(events) == "echo: hi"
    assert len(server.state.requests) == 3


async def test_a_rate_limit_that_lasts_fails_the_turn_after_four_attempts(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    events = await _turn(tmp_path, "openai/fail-429", server.base_url)
    assert len(server.state.requests) == 4 and len(of_type(events, "step.retrying")) == 3
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "MODEL_CALL_FAILED"
    assert failed["details"]["semanticErrorId"] == "model-rate-limited" and failed["details"]["attempts"] == 4


async def test_a_missing_key_fails_the_turn_at_once_with_one_code(
    tmp_path: Path, server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    events = await _turn(tmp_path, "openai/echo", server.base_url)
    assert "step.retrying" not in types(events)
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "MODEL_CALL_FAILED" and "OPENAI_API_KEY" in failed["message"]
    assert failed["details"] == {
        "semanticErrorId": "model-api-key-missing",
        "retryable": False,
        "provider": "openai",
        "envVar": "OPENAI_API_KEY",
    }
    assert server.state.requests == []


async def test_an_unreachable_url_fails_the_turn_at_once_naming_it(tmp_path: Path) -> None:
    url = _closed_url()
    events = await _turn(tmp_path, "openai/echo", url)
    assert "step.retrying" not in types(events)
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "MODEL_CALL_FAILED" and url in failed["message"]
    assert failed["details"]["semanticErrorId"] == "model-unreachable"
    assert failed["details"]["url"] == f"{url}/chat/completions"
