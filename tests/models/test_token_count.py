"""The offline models' input-token count stays exact however the conversation changes between calls."""

from __future__ import annotations

import gc

from eve_runtime.messages import AssistantMessage, Message, SystemMessage, ToolCall, UserMessage
from eve_runtime.models import token_count
from eve_runtime.models.token_count import input_tokens


def _fresh_count(messages: list[Message]) -> int:
    total = 0
    for message in messages:
        total += len(message.content.split())
        if isinstance(message, AssistantMessage):
            total += sum(len(token_count.arguments_text(call).split()) for call in message.tool_calls)
    return total


def _request(history: list[Message]) -> list[Message]:
    return [SystemMessage(content="you are a helpful agent"), *history]


def _history(turns: int) -> list[Message]:
    history: list[Message] = []
    for index in range(turns):
        history.append(UserMessage(content=f"question number {index}"))
        history.append(AssistantMessage(content=f"answer {index}"))
    return history


def test_the_count_follows_a_growing_conversation() -> None:
    history = _history(3)
    for index in range(5):
        request = _request(history)
        assert input_tokens(request) == _fresh_count(request)
        history.append(UserMessage(content=f"more words for call {index}"))
        call = ToolCall(id=f"c{index}", name="get_weather", arguments={"city": "Paris France"})
        history.append(AssistantMessage(content="", tool_calls=(call,)))


def test_a_compacted_or_edited_history_is_counted_afresh() -> None:
    history = _history(4)
    assert input_tokens(_request(history)) == _fresh_count(_request(history))
    compacted: list[Message] = [history[0], UserMessage(content="summary of it all"), *history[5:]]
    assert input_tokens(_request(compacted)) == _fresh_count(_request(compacted))
    shorter = history[:3]
    assert input_tokens(_request(shorter)) == _fresh_count(_request(shorter))
    longer = [*history, AssistantMessage(content="one two three")]
    assert input_tokens(_request(longer)) == _fresh_count(_request(longer))


def test_context_inserted_in_the_middle_is_counted() -> None:
    history = _history(3)
    input_tokens(_request(history))
    with_context = [*history[:4], UserMessage(content="Client context:\nsome page"), *history[4:]]
    assert input_tokens(_request(with_context)) == _fresh_count(_request(with_context))


def test_the_memo_goes_with_the_conversation() -> None:
    history = _history(2)
    input_tokens(_request(history))
    input_tokens(_request(history))
    anchor = id(history[0])
    assert anchor in token_count._conversations
    del history
    gc.collect()
    assert anchor not in token_count._conversations
