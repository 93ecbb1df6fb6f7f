from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from eve_runtime.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from eve_runtime.models import (
    Finish,
    FunctionInfo,
    FunctionModel,
    Model,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinition,
    ToolInputDelta,
    Usage,
)
from eve_runtime.models.function import FunctionStreamItem

pytestmark = pytest.mark.anyio

ADD = ToolDefinition(name="add", description="Add two numbers.", input_schema={"type": "object"})


async def run(
    model: Model,
    messages: list[Message],
    *,
    tools: Sequence[ToolDefinition] = (),
    settings: ModelSettings | None = None,
) -> list[ModelEvent]:
    request = ModelRequest(messages=messages, tools=tools, settings=settings or ModelSettings())
    return [event async for event in model.stream(request)]


def kinds(events: list[ModelEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


async def test_tool_call_then_text_like_pydantic_ai() -> None:
    seen: list[FunctionInfo] = []

    def respond(messages: list[Message], info: FunctionInfo) -> str | ToolCall:
        seen.append(info)
        if not any(isinstance(m, ToolMessage) for m in messages):
            return ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
        return "the sum is 3"

    model = FunctionModel(respond)
    assert isinstance(model, Model)
    assert model.model_id == "function"
    first = await run(model, [UserMessage(content="add 1 and 2")], tools=[ADD])
    assert kinds(first) == ["ToolCallStarted", "ToolInputDelta", "ToolInputDelta", "ToolCallFinished", "Finish"]
    assert first[0] == ToolCallStarted(call_id="c1", name="add")
    assert "".join(e.delta for e in first if isinstance(e, ToolInputDelta)) == '{"a":1,"b":2}'
    assert first[-1] == Finish(reason="tool-calls", usage=Usage(input_tokens=4, output_tokens=1))

    call = ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
    messages: list[Message] = [
        UserMessage(content="add 1 and 2"),
        AssistantMessage(tool_calls=(call,)),
        ToolMessage(tool_call_id="c1", name="add", content="3"),
    ]
    second = await run(model, messages, settings=ModelSettings(reasoning="low"))
    assert [e for e in second if isinstance(e, TextDelta)] == [
        TextDelta("the "),
        TextDelta("sum "),
        TextDelta("is "),
        TextDelta("3"),
    ]
    assert second[-1] == Finish(reason="stop", usage=Usage(input_tokens=6, output_tokens=4))
    assert [i.call_count for i in seen] == [1, 2]
    assert seen[0].tools == (ADD,)
    assert seen[1].settings.reasoning == "low"
    assert model.call_count == 2


async def test_parallel_calls_and_assistant_message() -> None:
    def respond(messages: list[Message], info: FunctionInfo) -> AssistantMessage:
        return AssistantMessage(
            content="two calls",
            reasoning="thinking hard",
            tool_calls=(ToolCall(id="a", name="add"), ToolCall(id="b", name="add", invalid_arguments="{oops")),
        )

    events = await run(FunctionModel(respond), [UserMessage(content="go")])
    assert kinds(events) == [
        "ReasoningDelta",
        "ReasoningDelta",
        "TextDelta",
        "TextDelta",
        "ToolCallStarted",
        "ToolInputDelta",
        "ToolInputDelta",
        "ToolCallStarted",
        "ToolInputDelta",
        "ToolInputDelta",
        "ToolCallFinished",
        "ToolCallFinished",
        "Finish",
    ]
    assert events[0] == ReasoningDelta("thinking ")
    finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
    assert finished[1].invalid_arguments == "{oops"
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool-calls"


async def test_list_of_tool_calls() -> None:
    def respond(messages: list[Message], info: FunctionInfo) -> list[ToolCall]:
        return [ToolCall(id="x", name="add"), ToolCall(id="y", name="add")]

    events = await run(FunctionModel(respond), [UserMessage(content="go")])
    assert [e.call.id for e in events if isinstance(e, ToolCallFinished)] == ["x", "y"]


async def test_async_function() -> None:
    async def respond(messages: list[Message], info: FunctionInfo) -> str:
        return f"you said {messages[-1].content}"

    events = await run(FunctionModel(respond, model_id="function/async"), [UserMessage(content="hi")])
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "you said hi"
    assert isinstance(events[-1], Finish) and events[-1].reason == "stop"


async def test_stream_function_text_calls_and_events() -> None:
    async def stream(messages: list[Message], info: FunctionInfo) -> AsyncIterator[FunctionStreamItem]:
        yield ReasoningDelta("hmm")
        yield "Hello "
        yield "world"
        yield ToolCall(id="c", name="add", arguments={"a": 1})

    events = await run(FunctionModel(stream_function=stream), [UserMessage(content="hi")])
    assert kinds(events) == [
        "ReasoningDelta",
        "TextDelta",
        "TextDelta",
        "ToolCallStarted",
        "ToolInputDelta",
        "ToolInputDelta",
        "ToolCallFinished",
        "Finish",
    ]
    assert events[-1] == Finish(reason="tool-calls", usage=Usage(input_tokens=1, output_tokens=4))


async def test_stream_function_may_supply_its_own_finish() -> None:
    closed = False

    async def stream(messages: list[Message], info: FunctionInfo) -> AsyncIterator[FunctionStreamItem]:
        nonlocal closed
        try:
            yield "partial"
            yield Finish(reason="length", usage=Usage(input_tokens=7, output_tokens=1), cost_usd=0.5)
            yield "never seen"
        finally:
            closed = True

    events = await run(FunctionModel(stream_function=stream), [UserMessage(content="hi")])
    assert events == [
        TextDelta("partial"),
        Finish(reason="length", usage=Usage(input_tokens=7, output_tokens=1), cost_usd=0.5),
    ]
    assert closed


async def test_exceptions_propagate_unchanged() -> None:
    def respond(messages: list[Message], info: FunctionInfo) -> str:
        if info.call_count == 1:
            raise ModelError("overloaded", retryable=True, status_code=529)
        return "ok"

    model = FunctionModel(respond)
    with pytest.raises(ModelError) as info:
        await run(model, [UserMessage(content="hi")])
    assert info.value.retryable is True
    assert info.value.status_code == 529
    assert (await run(model, [UserMessage(content="hi")]))[-1] == Finish(
        reason="stop", usage=Usage(input_tokens=1, output_tokens=1)
    )


async def test_stream_function_exceptions_propagate_after_partial_output() -> None:
    async def stream(messages: list[Message], info: FunctionInfo) -> AsyncIterator[FunctionStreamItem]:
        yield "partial"
        raise ValueError("boom")

    produced: list[ModelEvent] = []
    with pytest.raises(ValueError, match="boom"):
        async for event in FunctionModel(stream_function=stream).stream(ModelRequest(messages=[])):
            produced.append(event)
    assert produced == [TextDelta("partial")]


def test_needs_exactly_one_function() -> None:
    async def stream(messages: list[Message], info: FunctionInfo) -> AsyncIterator[FunctionStreamItem]:
        yield "x"

    with pytest.raises(TypeError):
        FunctionModel()
    with pytest.raises(TypeError):
        FunctionModel(lambda messages, info: "x", stream_function=stream)
    assert FunctionModel.__test__ is False
