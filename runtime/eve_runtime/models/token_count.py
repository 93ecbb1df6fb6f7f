"""The offline models' token count: words in every message sent, without recounting the history.

A model call sends the whole conversation, so counting it afresh on every call costs time that grows
with the session (about 0.2 ms a call at 900 messages here), paid on every step by the models whose
whole point is to cost nothing. Two memos keep a call's count near O(1):

- words per message object (by `id`, dropped when the message is collected);
- per conversation, the messages of the previous call after its first remembered message (the
  "anchor": the history's first message, since a request's instructions are built anew on every
  call) and their total. When the next call holds the same objects in the same order after the same
  anchor (one list comparison, which checks identity first, at C speed), only what follows is
  counted. Anything else (compaction, inserted context) falls back to the per-message memo.

The anchor memo holds the messages after the anchor, never the anchor itself, so it goes when the
anchor is collected.
"""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from eve_runtime.messages import AssistantMessage, Message, ToolCall

__all__ = ["arguments_text", "compact_json", "count_words", "input_tokens"]


@functools.lru_cache(maxsize=16384)
def count_words(text: str) -> int:
    """Count whitespace-separated words (the test models' token unit).

    Cached: every call recounts the whole conversation, whose messages repeat from call to call.
    """
    return len(text.split())


def compact_json(value: Any) -> str:
    """Serialize a value as compact JSON (no spaces after separators)."""
    return json.dumps(value, separators=(",", ":"))


def arguments_text(call: ToolCall) -> str:
    """The argument text of a tool call: the raw invalid text, or the compact JSON object."""
    return call.invalid_arguments if call.invalid_arguments is not None else compact_json(call.arguments)


_message_words: dict[int, int] = {}
_conversations: dict[int, tuple[list[Message], int]] = {}
"""By the anchor's `id`: the messages that followed it in the last call, and the words of the
anchor and those messages together."""


def _words(message: Message) -> int:
    total = count_words(message.content)
    if isinstance(message, AssistantMessage) and message.tool_calls:
        total += sum(count_words(arguments_text(call)) for call in message.tool_calls)
    return total


def _message_count(message: Message) -> int:
    count = _message_words.get(id(message))
    if count is None:
        count = _message_words[id(message)] = _words(message)
        weakref.finalize(message, _message_words.pop, id(message), None)
    return count


def _counts(messages: Sequence[Message]) -> int:
    known = _message_words
    counts = list(map(known.get, map(id, messages)))  # passes at C speed over the conversation
    if None not in counts:
        return sum(counts)  # type: ignore[arg-type]  # no None in it
    return sum(count if count is not None else _message_count(messages[i]) for i, count in enumerate(counts))


def input_tokens(messages: Iterable[Message]) -> int:
    """Words in all messages sent: their content plus each tool call's compact argument JSON."""
    if not isinstance(messages, Sequence):
        messages = list(messages)
    known = _message_words
    start = next((i for i, message in enumerate(messages) if id(message) in known), len(messages))
    if start == len(messages):
        return sum(map(_message_count, messages))
    total = sum(map(_words, messages[:start]))  # the instructions, new on every call
    anchor = messages[start]
    rest = messages[start + 1 :]
    previous = _conversations.get(id(anchor))
    if previous is not None and rest[: len(previous[0])] == previous[0]:
        conversation = previous[1] + sum(map(_words, rest[len(previous[0]) :]))
    else:
        conversation = _message_count(anchor) + _counts(rest)
        if previous is None:
            weakref.finalize(anchor, _conversations.pop, id(anchor), None)
    _conversations[id(anchor)] = (rest if isinstance(rest, list) else list(rest), conversation)
    return total + conversation
