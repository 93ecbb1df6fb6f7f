"""LiteLLMModel, proven offline through a scripted provider registered in litellm itself.

The scripted provider is a `litellm.CustomLLM` in `litellm.custom_provider_map`: every call goes
through `litellm.acompletion` and litellm's own stream wrapper, exactly like a real provider's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

import eve_runtime.models as models
from eve_runtime.messages import (
    AssistantMessage,
    Attachment,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from eve_runtime.models import (
    Finish,
    LiteLLMModel,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelRequestsBlockedError,
    ModelSettings,
    OutputDone,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinition,
    ToolInputDelta,
    Usage,
)
from eve_runtime.models.litellm_model import classify_error
from eve_runtime.models.openai_format import map_finish_reason, to_openai_messages, to_openai_tools

pytestmark = pytest.mark.anyio

ADD = ToolDefinition(
    name="add",
    description="Add two numbers.",
    input_schema={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)
HI = [UserMessage(content="hi")]


@dataclass
class Script:
    """What the scripted provider streams, and what it was called with."""

    chunks: list[Any] = field(default_factory=list)
    error: Exception | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[Script]:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    from litellm.llms.custom_llm import CustomLLM

    the_script = Script()

    class ScriptedProvider(CustomLLM):
        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
            the_script.calls.append(kwargs)
            for chunk in the_script.chunks:
                yield chunk
            if the_script.error is not None:
                raise the_script.error

    # litellm's setup appends the provider to these lists: give it copies that monkeypatch restores.
    monkeypatch.setattr(
        litellm, "custom_provider_map", [{"provider": "scripted", "custom_handler": ScriptedProvider()}]
    )
    monkeypatch.setattr(litellm, "provider_list", list(litellm.provider_list))
    monkeypatch.setattr(litellm, "_custom_providers", list(litellm._custom_providers))
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    yield the_script


def text(piece: str) -> dict[str, Any]:
    return {"text": piece, "is_finished": False, "finish_reason": "", "usage": None, "index": 0, "tool_use": None}


def tool(index: int, arguments: str = "", *, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    chunk = text("")
    chunk["tool_use"] = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        "index": index,
    }
    return chunk


def end(reason: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"text": "", "is_finished": True, "finish_reason": reason, "usage": usage, "index": 0, "tool_use": None}


async def run(
    messages: Sequence[Message] = HI,
    *,
    tools: list[ToolDefinition] | None = None,
    settings: ModelSettings | None = None,
    model_id: str = "scripted/m",
) -> list[ModelEvent]:
    request = ModelRequest(messages=messages, tools=tools or [], settings=settings or ModelSettings())
    return [event async for event in LiteLLMModel(model_id, guard=models.check_allow_model_requests).stream(request)]


def finish_of(events: list[ModelEvent]) -> Finish:
    assert isinstance(events[-1], Finish)
    assert sum(isinstance(e, Finish) for e in events) == 1
    return events[-1]


async def test_plain_text(script: Script) -> None:
    script.chunks = [text("Hello "), text("world"), end("stop")]
    events = await run()
    # The finish chunk says the output is whole (`OutputDone`), before litellm ends its stream.
    assert [e for e in events if not isinstance(e, Finish)] == [TextDelta("Hello "), TextDelta("world"), OutputDone()]
    finish = finish_of(events)
    assert finish.reason == "stop"
    assert finish.provider_reason is None
    assert finish.cost_usd is None  # the scripted model has no price
    call = script.calls[0]
    assert call["model"] == "m"
    assert call["messages"] == [{"role": "user", "content": "hi"}]
    assert call["optional_params"]["stream_options"] == {"include_usage": True}


async def test_tool_arguments_split_across_chunks(script: Script) -> None:
    script.chunks = [
        text("Adding."),
        tool(0, call_id="call_1", name="add"),
        tool(0, '{"a": '),
        tool(0, '1, "b"'),
        tool(0, ": 2}"),
        end("tool_calls"),
    ]
    events = await run(tools=[ADD])
    assert events[:-1] == [
        TextDelta("Adding."),
        ToolCallStarted(call_id="call_1", name="add"),
        ToolInputDelta(call_id="call_1", delta='{"a": '),
        ToolInputDelta(call_id="call_1", delta='1, "b"'),
        ToolInputDelta(call_id="call_1", delta=": 2}"),
        OutputDone(),
        ToolCallFinished(call=ToolCall(id="call_1", name="add", arguments={"a": 1, "b": 2})),
    ]
    assert finish_of(events).reason == "tool-calls"
    assert script.calls[0]["optional_params"]["tools"] == to_openai_tools([ADD])


async def test_two_parallel_calls_interleaved(script: Script) -> None:
    script.chunks = [
        tool(0, call_id="c0", name="add"),
        tool(1, call_id="c1", name="add"),
        tool(0, '{"a":'),
        tool(1, '{"a":'),
        tool(1, "2}"),
        tool(0, "1}"),
        end("tool_calls"),
    ]
    events = await run(tools=[ADD])
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolCallFinished") > max(i for i, k in enumerate(kinds) if k == "ToolInputDelta")
    for call_id, expected in (("c0", '{"a":1}'), ("c1", '{"a":2}')):
        assert "".join(e.delta for e in events if isinstance(e, ToolInputDelta) and e.call_id == call_id) == expected
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == [
        ToolCall(id="c0", name="add", arguments={"a": 1}),
        ToolCall(id="c1", name="add", arguments={"a": 2}),
    ]


async def test_whole_calls_sharing_index_zero_stay_separate(script: Script) -> None:
    script.chunks = [
        tool(0, '{"a":1}', call_id="x", name="add"),
        tool(0, '{"a":2}', call_id="y", name="add"),
        end("stop"),
    ]
    events = await run(tools=[ADD])
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == [
        ToolCall(id="x", name="add", arguments={"a": 1}),
        ToolCall(id="y", name="add", arguments={"a": 2}),
    ]
    # litellm itself turns "stop" into "tool_calls" when the answer has tool calls.
    assert finish_of(events).reason == "tool-calls"


async def test_invalid_arguments_are_kept_raw(script: Script) -> None:
    script.chunks = [tool(0, call_id="c", name="add"), tool(0, "{oops"), end("tool_calls")]
    events = await run(tools=[ADD])
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == [
        ToolCall(id="c", name="add", invalid_arguments="{oops")
    ]


async def test_reasoning(script: Script) -> None:
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    def chunk(**delta: Any) -> Any:
        return ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(**delta))])

    script.chunks = [
        chunk(reasoning_content="Let me "),
        chunk(reasoning_content="think."),
        chunk(content="42"),
        ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(), finish_reason="stop")]),
    ]
    settings = ModelSettings(
        reasoning="high", max_output_tokens=100, model_options={"allowed_openai_params": ["reasoning_effort"]}
    )
    events = await run(settings=settings)
    assert events[:-1] == [ReasoningDelta("Let me "), ReasoningDelta("think."), TextDelta("42"), OutputDone()]
    assert finish_of(events).reason == "stop"
    params = script.calls[0]["optional_params"]
    assert params["reasoning_effort"] == "high"
    assert params["max_tokens"] == 100


async def test_provider_default_reasoning_is_not_sent(script: Script) -> None:
    script.chunks = [text("ok"), end("stop")]
    await run(settings=ModelSettings(reasoning="provider-default"))
    assert "reasoning_effort" not in script.calls[0]["optional_params"]


async def test_usage_and_cost(script: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    price = {
        "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6,
        "litellm_provider": "scripted",
        "mode": "chat",
    }
    monkeypatch.setitem(litellm.model_cost, "scripted/priced", price)
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "prompt_tokens_details": {"cached_tokens": 20},
        "cache_creation_input_tokens": 5,
    }
    script.chunks = [text("ok"), end("stop", usage)]
    finish = finish_of(await run(model_id="scripted/priced"))
    assert finish.usage == Usage(input_tokens=100, output_tokens=10, cache_read_tokens=20, cache_write_tokens=5)
    assert finish.cost_usd == pytest.approx(100 * 1e-6 + 10 * 2e-6, rel=0.05)


async def test_no_price_means_no_cost(script: Script) -> None:
    script.chunks = [text("ok"), end("stop", {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4})]
    finish = finish_of(await run())
    assert finish.usage == Usage(input_tokens=3, output_tokens=1)
    assert finish.cost_usd is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("stop", "stop"), ("length", "length"), ("content_filter", "content-filter"), ("tool_calls", "tool-calls")],
)
async def test_finish_reasons_through_litellm(script: Script, raw: str, reason: str) -> None:
    script.chunks = [text("x"), end(raw)]
    finish = finish_of(await run())
    assert (finish.reason, finish.provider_reason) == (reason, None)


def test_finish_reason_mapping() -> None:
    assert map_finish_reason("function_call", has_tool_calls=True) == ("tool-calls", "function_call")
    assert map_finish_reason("something_new", has_tool_calls=False) == ("other", "something_new")
    assert map_finish_reason("stop", has_tool_calls=True) == ("tool-calls", "stop")
    assert map_finish_reason(None, has_tool_calls=False) == ("stop", None)
    assert map_finish_reason(None, has_tool_calls=True) == ("tool-calls", None)


def _response(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))


def _errors() -> list[tuple[str, Callable[[Any], Exception], str, int | None]]:
    return [
        ("rate limit", lambda m: m.RateLimitError("slow down", "scripted", "m"), "model-rate-limited", 429),
        ("timeout", lambda m: m.Timeout("too slow", "m", "scripted"), "model-timeout", 408),
        ("connection", lambda m: m.APIConnectionError("reset", "scripted", "m"), "model-connection-lost", None),
        ("unavailable", lambda m: m.ServiceUnavailableError("down", "scripted", "m"), "model-server-error", 503),
        ("internal", lambda m: m.InternalServerError("boom", "scripted", "m"), "model-server-error", 500),
        ("overloaded 529", lambda m: m.APIError(529, "Overloaded", "scripted", "m"), "model-server-error", 529),
        ("auth", lambda m: m.AuthenticationError("bad key", "scripted", "m"), "model-authentication-failed", 401),
        ("bad request", lambda m: m.BadRequestError("bad", "m", "scripted"), "model-bad-request", 400),
        ("not found", lambda m: m.NotFoundError("no such model", "m", "scripted"), "model-not-found", 404),
        (
            "permission",
            lambda m: m.PermissionDeniedError("no", "scripted", "m", _response(403)),
            "model-permission-denied",
            403,
        ),
        (
            "context window",
            lambda m: m.ContextWindowExceededError("too long", "m", "scripted"),
            "model-context-window-exceeded",
            400,
        ),
    ]


RETRIED = {"model-rate-limited", "model-timeout", "model-connection-lost", "model-server-error"}


@pytest.mark.parametrize(("label", "make", "kind", "status"), _errors(), ids=[e[0] for e in _errors()])
async def test_errors_are_classified(
    script: Script, label: str, make: Callable[[Any], Exception], kind: str, status: int | None
) -> None:
    import litellm

    script.error = make(litellm)
    with pytest.raises(ModelError) as info:
        await run()
    error = info.value
    assert type(error) is ModelError
    assert error.kind == kind, str(error)
    assert error.retryable is (kind in RETRIED), str(error)
    if status is not None:
        assert error.status_code == status
    assert error.provider == "scripted"
    assert "scripted/m" in str(error)


async def test_error_after_partial_output(script: Script) -> None:
    from litellm.exceptions import RateLimitError

    script.chunks = [text("partial ")]
    script.error = RateLimitError("slow down", "scripted", "m")
    produced: list[ModelEvent] = []
    with pytest.raises(ModelError) as info:
        async for event in LiteLLMModel("scripted/m", guard=models.check_allow_model_requests).stream(
            ModelRequest(messages=HI)
        ):
            produced.append(event)
    assert produced == [TextDelta("partial ")]
    assert info.value.retryable is True


async def test_a_missing_key_fails_before_the_call(script: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError) as info:
        await run(model_id="openai/gpt-4o-mini", settings=ModelSettings(model_options={"api_base": "http://x/v1"}))
    error = info.value
    assert (error.kind, error.retryable, error.variable) == ("model-api-key-missing", False, "OPENAI_API_KEY")
    assert "needs an API key in OPENAI_API_KEY, which is not set" in str(error)
    assert "local or proxied server" in str(error)  # an api_base was given: the variable is still needed
    from eve_runtime.models.providers import missing_key

    assert missing_key("openai/gpt-4o-mini", {"api_key": "sk-1"}, {}) is None  # a key in model_options is a key
    assert missing_key("openai/gpt-4o-mini", {}, {"OPENAI_API_KEY": " "}) == "OPENAI_API_KEY"
    assert missing_key("gemini/g", {}, {"GOOGLE_API_KEY": "k"}) is None  # any of the provider's variables
    assert missing_key("ollama/llama3", {}, {}) is None  # a provider that needs no key
    assert missing_key("test", {}, {}) is None


async def test_the_sdks_own_retries_are_off(script: Script) -> None:
    model = LiteLLMModel("scripted/m", guard=models.check_allow_model_requests)
    assert model.completion_kwargs(ModelRequest(messages=HI))["max_retries"] == 0
    options = ModelSettings(model_options={"max_retries": 2})
    assert model.completion_kwargs(ModelRequest(messages=HI, settings=options))["max_retries"] == 2


async def test_unsupported_neutral_setting_is_dropped_not_fatal(script: Script) -> None:
    # reasoning is provider-neutral: a provider without it ignores it (litellm's drop_params).
    script.chunks = [text("ok")]
    events = await run(settings=ModelSettings(reasoning="high"))
    assert TextDelta("ok") in events
    assert "reasoning_effort" not in script.calls[0].get("optional_params", {})


async def test_error_before_streaming_unsupported_param(script: Script) -> None:
    # With drop_params turned off, litellm rejects reasoning_effort in acompletion() itself, before any chunk.
    with pytest.raises(ModelError) as info:
        await run(settings=ModelSettings(reasoning="high", model_options={"drop_params": False}))
    assert info.value.retryable is False
    assert info.value.status_code == 400
    assert script.calls == []


async def test_content_policy_violation_is_a_content_filter_finish(script: Script) -> None:
    from litellm.exceptions import ContentPolicyViolationError

    script.error = ContentPolicyViolationError("refused", "m", "scripted")
    events = await run()
    assert events == [Finish(reason="content-filter", provider_reason="content_policy_violation")]


def test_classify_unknown_errors() -> None:
    overloaded = classify_error(RuntimeError("the server is overloaded"), "openai/x")
    assert (overloaded.retryable, overloaded.kind) == (True, "model-server-error")
    unknown = classify_error(RuntimeError("odd"), "openai/x")
    assert (unknown.retryable, unknown.provider, unknown.status_code, unknown.kind) == (
        False,
        "openai",
        None,
        "model-call-failed",
    )


def _raised_from(*chain: BaseException) -> BaseException:
    """The first exception, raised while handling the second, itself raised while handling the third..."""
    for outer, inner in zip(chain, chain[1:], strict=False):
        outer.__context__ = inner
    return chain[0]


def test_the_missing_key_words_of_every_provider_are_one_kind() -> None:
    from litellm.exceptions import APIConnectionError, AuthenticationError, InternalServerError

    openai_500 = InternalServerError(
        "OpenAIException - Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` environment "
        "variable.",
        "openai",
        "gpt-4o-mini",
    )
    anthropic_401 = AuthenticationError("Missing Anthropic API Key - A call is being made", "anthropic", "c")
    gemini = APIConnectionError("Missing Gemini API key. Set the GEMINI_API_KEY", "gemini", "g")
    for exc, model_id, variable in (
        (openai_500, "openai/gpt-4o-mini", "OPENAI_API_KEY"),
        (anthropic_401, "anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
        (gemini, "gemini/gemini-flash-latest", "GEMINI_API_KEY"),
    ):
        error = classify_error(exc, model_id)
        assert (error.kind, error.retryable, error.variable) == ("model-api-key-missing", False, variable)
        assert variable in str(error)


def test_a_refused_connection_names_the_url_and_is_not_retried() -> None:
    from litellm.exceptions import InternalServerError

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions?key=secret")
    transport = httpx.ConnectError("Cannot connect to host 127.0.0.1:9", request=request)
    refused = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)")
    outer = InternalServerError("OpenAIException - Connection error.", "openai", "gpt-4o-mini")
    error = classify_error(_raised_from(outer, transport, refused), "openai/gpt-4o-mini")
    assert (error.kind, error.retryable) == ("model-unreachable", False)
    assert error.url == "http://127.0.0.1:9/v1/chat/completions"  # the query string (a key, for some) is dropped
    assert "http://127.0.0.1:9/v1/chat/completions: connection refused" in str(error)
    assert "secret" not in str(error)


def test_a_reset_connection_is_retried_and_names_the_configured_url() -> None:
    reset = ConnectionResetError(104, "Connection reset by peer")
    error = classify_error(_raised_from(RuntimeError("Connection error."), reset), "x/m", api_base="http://h:1/v1")
    assert (error.kind, error.retryable, error.url) == ("model-connection-lost", True, "http://h:1/v1")
    assert "http://h:1/v1" in str(error) and "connection reset" in str(error)


def test_a_rate_limit_keeps_the_providers_retry_after() -> None:
    from litellm.exceptions import RateLimitError

    response = httpx.Response(
        429, headers={"retry-after": "2.5"}, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    )
    error = classify_error(RateLimitError("slow down", "openai", "m", response=response), "openai/m")
    assert (error.kind, error.retry_after) == ("model-rate-limited", 2.5)


async def test_stopping_early_closes_the_stream(script: Script) -> None:
    script.chunks = [text("a "), text("b "), text("c"), end("stop")]
    stream = LiteLLMModel("scripted/m", guard=models.check_allow_model_requests).stream(ModelRequest(messages=HI))
    async for event in stream:
        assert event == TextDelta("a ")
        break
    await stream.aclose()  # type: ignore[attr-defined]


async def test_blocked_when_model_requests_are_not_allowed() -> None:
    assert models.ALLOW_MODEL_REQUESTS is False  # tests/conftest.py
    with pytest.raises(ModelRequestsBlockedError) as info:
        await run(model_id="openai/gpt-5.4-mini")
    assert "openai/gpt-5.4-mini" in str(info.value)
    assert info.value.retryable is False


async def test_model_options_reach_the_provider(script: Script) -> None:
    script.chunks = [text("ok"), end("stop")]
    await run(settings=ModelSettings(max_output_tokens=5, model_options={"temperature": 0.25, "max_tokens": 7}))
    params = script.calls[0]["optional_params"]
    assert (params["temperature"], params["max_tokens"]) == (0.25, 7)


async def test_history_is_translated_to_openai_messages(script: Script) -> None:
    script.chunks = [text("ok"), end("stop")]
    history: list[Message] = [
        SystemMessage(content="be kind"),
        UserMessage(content="add"),
        AssistantMessage(
            content="", reasoning="private", tool_calls=(ToolCall(id="c1", name="add", arguments={"a": 1}),)
        ),
        ToolMessage(tool_call_id="c1", name="add", content="1"),
    ]
    await run(history, tools=[ADD])
    sent = script.calls[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "c1"
    assert sent[3]["tool_call_id"] == "c1"


async def test_attachments_reach_litellm_as_content_parts(script: Script) -> None:
    script.chunks = [text("ok"), end("stop")]
    png = Attachment(media_type="image/png", size=8, data="iVBORw0KGgo=")
    await run([UserMessage(content="look", attachments=(png,))])
    assert script.calls[0]["messages"][0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


def test_to_openai_messages() -> None:
    messages: list[Message] = [
        SystemMessage(content="s"),
        UserMessage(content="u"),
        AssistantMessage(content="plain"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="a", name="add", arguments={"a": 1}),
                ToolCall(id="b", name="add", invalid_arguments="{oops"),
            )
        ),
        ToolMessage(tool_call_id="a", name="add", content="1", is_error=False),
    ]
    assert to_openai_messages(messages) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "plain"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
                {"id": "b", "type": "function", "function": {"name": "add", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "name": "add", "content": "1"},
    ]


def test_first_import_is_offline_quiet_and_warning_free() -> None:
    # A fresh process without LITELLM_LOCAL_MODEL_COST_MAP, every network lookup recorded and refused.
    code = textwrap.dedent(
        """
        import asyncio, logging, os, socket, sys
        attempts = []
        def refuse(*args, **kwargs):
            attempts.append(args[:1])
            raise OSError("network disabled in this test")
        socket.getaddrinfo = refuse
        socket.socket.connect = refuse
        from eve_runtime.models import litellm_model
        assert "litellm" not in sys.modules
        litellm = asyncio.run(litellm_model._litellm())
        print(os.environ["LITELLM_LOCAL_MODEL_COST_MAP"], litellm.suppress_debug_info,
              logging.getLogger("LiteLLM").level == logging.ERROR, attempts)
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True", "[]"]
    assert result.stderr == ""


async def test_context_window_from_litellm_model_info() -> None:
    assert (
        await LiteLLMModel("openai/gpt-4o-mini", guard=models.check_allow_model_requests).context_window_tokens()
        == 128_000
    )
    assert (
        await LiteLLMModel("nowhere/no-such-model", guard=models.check_allow_model_requests).context_window_tokens()
        is None
    )
