from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from eve_runtime.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from eve_runtime.models import (
    Finish,
    Model,
    ModelError,
    ModelEvent,
    ModelRequest,
    TestModel,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinition,
    ToolInputDelta,
    Usage,
)
from eve_runtime.models.test_model import split_words

pytestmark = pytest.mark.anyio

REPLY_TOOL = ToolDefinition(name="eve__reply", description="Reply with the output.", input_schema={"type": "object"})


async def run(messages: Sequence[Message], tools: Sequence[ToolDefinition] = ()) -> list[ModelEvent]:
    return [event async for event in TestModel().stream(ModelRequest(messages=messages, tools=tools))]


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def finish_of(events: list[ModelEvent]) -> Finish:
    assert isinstance(events[-1], Finish)
    assert sum(isinstance(e, Finish) for e in events) == 1
    return events[-1]


def calls_of(events: list[ModelEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallFinished)]


def first_step_then_results(text: str, results: dict[str, str]) -> list[Message]:
    """The conversation after the first step's calls ran: one tool message per call."""
    user = UserMessage(content=text)
    call_lines = [line for line in text.splitlines() if line.startswith("/call ")]
    calls = tuple(ToolCall(id=f"call_0_{i}", name=line.split()[1], arguments={}) for i, line in enumerate(call_lines))
    tool_messages = [ToolMessage(tool_call_id=call.id, name=call.name, content=results[call.name]) for call in calls]
    return [user, AssistantMessage(tool_calls=calls), *tool_messages]


def test_is_a_model_and_not_collected() -> None:
    model = TestModel("test/anything")
    assert isinstance(model, Model)
    assert model.model_id == "test/anything"
    assert TestModel.__test__ is False


async def test_echo_streams_one_word_per_delta() -> None:
    events = await run([SystemMessage(content="be brief"), UserMessage(content="hello there  world")])
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta("echo: "),
        TextDelta("hello "),
        TextDelta("there  "),
        TextDelta("world"),
    ]
    finish = finish_of(events)
    assert finish.reason == "stop"
    assert finish.cost_usd is None
    assert finish.usage == Usage(input_tokens=5, output_tokens=4)


async def test_echo_answers_the_newest_user_message() -> None:
    events = await run(
        [UserMessage(content="first"), AssistantMessage(content="echo: first"), UserMessage(content="second")]
    )
    assert text_of(events) == "echo: second"


def test_split_words_keeps_whitespace() -> None:
    assert split_words("  a b\n c ") == ["  a ", "b\n ", "c "]
    assert split_words("") == []
    assert split_words("   ") == ["   "]
    assert "".join(split_words(" x  y ")) == " x  y "


async def test_say_is_the_answer_without_calls() -> None:
    events = await run([UserMessage(content="/say hi there")])
    assert text_of(events) == "hi there"
    assert finish_of(events).reason == "stop"


async def test_several_say_and_reply_lines_join() -> None:
    assert text_of(await run([UserMessage(content="/say a\n/say b")])) == "a\nb"
    assert text_of(await run([UserMessage(content="/reply one\n/reply two")])) == "one\ntwo"


async def test_reply_wins_over_say_and_ordinary_text() -> None:
    events = await run([UserMessage(content="please\n/say ignored\n/reply exactly this")])
    assert text_of(events) == "exactly this"


async def test_directive_words_must_stand_alone() -> None:
    events = await run([UserMessage(content="/sayhello\n/replying no")])
    assert text_of(events) == "echo: /sayhello\n/replying no"


async def test_single_call_streams_input_deltas() -> None:
    events = await run([UserMessage(content='/call add {"a": 1, "b": 2}')])
    assert events[0] == ToolCallStarted(call_id="call_0_0", name="add")
    deltas = [e for e in events if isinstance(e, ToolInputDelta)]
    assert len(deltas) >= 2
    assert "".join(d.delta for d in deltas) == '{"a":1,"b":2}'
    assert calls_of(events) == [ToolCall(id="call_0_0", name="add", arguments={"a": 1, "b": 2})]
    finish = finish_of(events)
    assert finish.reason == "tool-calls"
    assert finish.usage.output_tokens == 1


async def test_call_without_arguments_gets_an_empty_object() -> None:
    events = await run([UserMessage(content="/call now")])
    assert calls_of(events) == [ToolCall(id="call_0_0", name="now", arguments={})]
    assert "".join(e.delta for e in events if isinstance(e, ToolInputDelta)) == "{}"


async def test_parallel_calls_all_deltas_before_the_first_finished() -> None:
    events = await run([UserMessage(content='/say On it.\n/call a {"x": 1}\n/call b {"y": "two words"}')])
    kinds = [type(e).__name__ for e in events]
    assert kinds[:2] == ["TextDelta", "TextDelta"]
    assert text_of(events) == "On it."
    first_finished = kinds.index("ToolCallFinished")
    assert "ToolInputDelta" not in kinds[first_finished:]
    assert kinds[first_finished:] == ["ToolCallFinished", "ToolCallFinished", "Finish"]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started == [ToolCallStarted("call_0_0", "a"), ToolCallStarted("call_0_1", "b")]
    for call in calls_of(events):
        text = "".join(e.delta for e in events if isinstance(e, ToolInputDelta) and e.call_id == call.id)
        assert json.loads(text) == call.arguments
    assert [c.name for c in calls_of(events)] == ["a", "b"]
    # "On it." is 2 words, {"x":1} one, {"y":"two words"} two.
    assert finish_of(events).usage.output_tokens == 5


async def test_tool_results_are_answered_in_call_order_with_sorted_compact_json() -> None:
    text = "/call b\n/call a\n/call c"
    messages = first_step_then_results(text, {"a": '{"z": 1, "m": [1, 2]}', "b": "plain text", "c": "42"})
    # Results arrive in another order than the calls were made.
    messages = [messages[0], messages[1], messages[3], messages[4], messages[2]]
    events = await run(messages)
    assert text_of(events) == 'b -> "plain text"\na -> {"m":[1,2],"z":1}\nc -> 42'
    assert finish_of(events).reason == "stop"


async def test_reply_after_calls_is_the_final_answer() -> None:
    text = "/call a\n/reply all done"
    first = await run([UserMessage(content=text)])
    assert [c.name for c in calls_of(first)] == ["a"]
    events = await run(first_step_then_results(text, {"a": "{}"}))
    assert text_of(events) == "all done"


async def test_say_is_not_repeated_after_tool_results() -> None:
    events = await run(first_step_then_results("/say working\n/call a", {"a": '"ok"'}))
    assert text_of(events) == 'a -> "ok"'


async def test_json_without_reply_tool_is_compact_text() -> None:
    events = await run([UserMessage(content='/json {"answer": 42, "items": [1, 2]}')])
    assert text_of(events) == '{"answer":42,"items":[1,2]}'
    assert finish_of(events).reason == "stop"


async def test_json_with_reply_tool_calls_it() -> None:
    events = await run([UserMessage(content='/json {"answer": 42}')], tools=[REPLY_TOOL])
    assert calls_of(events) == [ToolCall(id="call_0_0", name="eve__reply", arguments={"answer": 42})]
    assert text_of(events) == ""
    assert finish_of(events).reason == "tool-calls"


async def test_json_non_object_with_reply_tool_is_text() -> None:
    events = await run([UserMessage(content="/json [1, 2]")], tools=[REPLY_TOOL])
    assert calls_of(events) == []
    assert text_of(events) == "[1,2]"


async def test_json_after_calls_goes_through_reply_tool_once() -> None:
    text = '/call lookup\n/json {"ok": true}'
    first = await run([UserMessage(content=text)], tools=[REPLY_TOOL])
    assert [c.name for c in calls_of(first)] == ["lookup"]
    messages = first_step_then_results(text, {"lookup": "{}"})
    second = await run(messages, tools=[REPLY_TOOL])
    reply = calls_of(second)
    assert [(c.id, c.name, c.arguments) for c in reply] == [("call_1_0", "eve__reply", {"ok": True})]
    # Asked again after eve__reply ran, it answers in text instead of calling it forever.
    messages += [
        AssistantMessage(tool_calls=tuple(reply)),
        ToolMessage(tool_call_id="call_1_0", name="eve__reply", content="{}"),
    ]
    third = await run(messages, tools=[REPLY_TOOL])
    assert calls_of(third) == []
    assert text_of(third) == '{"ok":true}'


async def test_delay_sleeps_before_every_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    events = await run([UserMessage(content='/delay 5\n/say a b\n/call t {"k": 1}')])
    deltas = [e for e in events if isinstance(e, (TextDelta, ToolInputDelta))]
    assert len(deltas) == 4
    assert slept == [0.005] * len(deltas)


async def test_no_delay_no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    async def recording_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    await run([UserMessage(content="hello")])
    assert slept == []


async def test_fail_raises_before_anything() -> None:
    produced: list[ModelEvent] = []
    with pytest.raises(ModelError) as info:
        async for event in TestModel().stream(
            ModelRequest(messages=[UserMessage(content="/say hi\n/fail provider down")])
        ):
            produced.append(event)
    assert produced == []
    assert str(info.value) == "provider down"
    assert info.value.retryable is False


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("/call add {not json}", "/call add {not json}"),
        ("/call add [1, 2]", "JSON object"),
        ("/call", "/call"),
        ("/delay soon", "/delay soon"),
        ("/delay -5", "/delay -5"),
        ("/delay ²", "/delay ²"),
        ("/json {oops", "/json {oops"),
        ("/json", "/json"),
    ],
)
async def test_malformed_directives_are_model_errors(line: str, fragment: str) -> None:
    with pytest.raises(ModelError) as info:
        await run([UserMessage(content=f"hello\n{line}")])
    assert fragment in str(info.value)
    assert info.value.retryable is False
    assert info.value.__cause__ is None


async def test_usage_counts_words_of_all_messages() -> None:
    messages: list[Message] = [
        SystemMessage(content="you are terse"),
        UserMessage(content="one two"),
        AssistantMessage(content="three", tool_calls=(ToolCall(id="c", name="t", arguments={"a": "b c"}),)),
        ToolMessage(tool_call_id="c", name="t", content="four five six"),
    ]
    events = await run(messages)
    # 3 + 2 + (1 + 2 for {"a":"b c"}) + 3
    assert finish_of(events).usage.input_tokens == 11


async def test_call_ids_are_unique_across_steps_and_turns() -> None:
    text = "/call a\n/call b"
    history: list[Message] = [UserMessage(content=text)]
    seen: list[str] = []
    for _ in range(2):
        first = await run(history)
        calls = calls_of(first)
        seen += [c.id for c in calls]
        history += [AssistantMessage(tool_calls=tuple(calls))]
        history += [ToolMessage(tool_call_id=c.id, name=c.name, content="1") for c in calls]
        final = await run(history)
        history += [AssistantMessage(content=text_of(final)), UserMessage(content=text)]
    assert len(seen) == 4
    assert len(set(seen)) == 4


# -- compaction requests ---------------------------------------------------------------------------

SUMMARY_PROMPT = (
    "<previous-checkpoint>\n{previous}\n</previous-checkpoint>\n\n<conversation>\nConversation transcript:\n"
    "{transcript}\n</conversation>\n\nUpdate the checkpoint."
)


async def test_a_compaction_request_gets_a_short_deterministic_summary() -> None:
    transcript = "### user\nplan the trip to Oslo\nwith details\n\n### assistant\nsure\n\n### tool result (x)\n{}"
    prompt = SUMMARY_PROMPT.format(previous="(none)", transcript=transcript)
    events = await run([SystemMessage(content="sys"), UserMessage(content=prompt)])
    assert text_of(events) == "summary of 3 messages; last user message: plan the trip to Oslo"
    assert finish_of(events).reason == "stop"
    again = SUMMARY_PROMPT.format(previous=text_of(events), transcript="### assistant\nok")
    events = await run([UserMessage(content=again)])
    assert text_of(events) == "summary of 4 messages; last user message: plan the trip to Oslo"


async def test_fail_summary_fails_only_a_compaction_request() -> None:
    prompt = SUMMARY_PROMPT.format(previous="(none)", transcript="### user\n/fail-summary not now")
    with pytest.raises(ModelError, match="not now") as caught:
        await run([UserMessage(content=prompt)])
    assert not caught.value.retryable
    events = await run([UserMessage(content="/fail-summary not now")])
    assert text_of(events) == "echo: /fail-summary not now"  # ordinary text in a turn
