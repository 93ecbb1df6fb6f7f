"""The offline `test` model: deterministic answers driven by directives in the user's message.

The model reads the newest user message line by line. A line that starts with a directive word
is a directive; every other line is ordinary text:

| line | effect |
|---|---|
| `/call NAME {json args}` | in the first step, call tool NAME (several lines = parallel calls, in order) |
| `/say TEXT` | text streamed before the first step's tool calls (the answer when there are none) |
| `/reply TEXT` | the final answer is exactly TEXT |
| `/delay MS` | wait MS milliseconds before each streamed delta |
| `/fail TEXT` | the call fails with a non-retryable `ModelError` carrying TEXT |
| `/json {json}` | the final answer is this JSON (through the `eve__reply` tool when it is offered) |

Several `/say` or `/reply` lines join with newlines. Without directives the answer is
`echo: <the message>`, plus one line per file or image attached to it (`[attached NAME (TYPE,
N bytes)]`, or `[attached URL (TYPE)]`); after tool results it is one line per result, `NAME -> <compact JSON>`.
A message that is eve's compaction request (it starts with `<previous-checkpoint>`) gets a
short deterministic summary instead (see `eve_runtime.models.test_summary`).
It speaks the same language as the fake OpenAI server the original eve was recorded against.
"""

from __future__ import annotations

import asyncio
import json
import operator
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from eve_runtime.models.base import (
    Finish,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    Usage,
)
from eve_runtime.models.test_summary import is_summary_request, summarize
from eve_runtime.models.token_count import arguments_text, compact_json, count_words, input_tokens

__all__ = ["TestModel"]

REPLY_TOOL = "eve__reply"
"""The tool eve offers to fulfil an output schema; `/json` answers through it."""

_WORD = re.compile(r"\S+\s*")
_CALL = re.compile(r"([^\s{]+)\s*(.*)", re.DOTALL)
_DIRECTIVE = re.compile(r"(/[a-z]+)(?:\s+(.*))?", re.DOTALL)
_DIRECTIVES = ("/call", "/say", "/reply", "/delay", "/fail", "/json")


def split_words(text: str) -> list[str]:
    """Split text into stream pieces: one word each, trailing whitespace kept, leading whitespace on the first."""
    pieces = _WORD.findall(text)
    if not pieces:
        return [text] if text else []
    lead = text[: len(text) - len(text.lstrip())]
    if lead:
        pieces[0] = lead + pieces[0]
    return pieces


def split_arguments(text: str) -> list[str]:
    """Split argument text in two halves, as a provider streaming arguments would (one piece if 1 char)."""
    if len(text) <= 1:
        return [text] if text else []
    half = len(text) // 2
    return [text[:half], text[half:]]


def tool_call_events(calls: Sequence[ToolCall]) -> Iterator[ModelEvent]:
    """Every call's start and input deltas, then every call's finish, in order."""
    for call in calls:
        yield ToolCallStarted(call_id=call.id, name=call.name)
        for piece in split_arguments(arguments_text(call)):
            yield ToolInputDelta(call_id=call.id, delta=piece)
    for call in calls:
        yield ToolCallFinished(call=call)


@dataclass
class _Directives:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    say: list[str] = field(default_factory=list)
    reply: list[str] = field(default_factory=list)
    delay_ms: int = 0
    fail: str | None = None
    json_given: bool = False
    json_value: Any = None


def _bad(line: str, why: str) -> ModelError:
    return ModelError(f"test model: malformed directive {line!r}: {why}", retryable=False)


def parse_directives(text: str) -> _Directives:
    """Read the directives of a user message (see the module docstring).

    Raises:
        ModelError: A directive's arguments are malformed (non-retryable; the message names the line).
    """
    found = _Directives()
    for raw_line in text.splitlines():
        line = raw_line.strip()
        match = _DIRECTIVE.fullmatch(line)
        if match is None or match.group(1) not in _DIRECTIVES:
            continue
        word, rest = match.group(1), (match.group(2) or "").strip()
        if word == "/call":
            found.calls.append(_parse_call(line, rest))
        elif word == "/say":
            found.say.append(rest)
        elif word == "/reply":
            found.reply.append(rest)
        elif word == "/delay":
            if not (rest.isascii() and rest.isdigit()):
                raise _bad(line, "/delay takes a whole number of milliseconds, like '/delay 50'")
            found.delay_ms = int(rest)
        elif word == "/fail":
            found.fail = rest or "the test model was asked to fail (/fail)"
        else:
            try:
                found.json_value = json.loads(rest)
            except ValueError as exc:
                raise _bad(line, f"/json takes a JSON value ({exc})") from None
            found.json_given = True
    return found


def _parse_call(line: str, rest: str) -> tuple[str, dict[str, Any]]:
    match = _CALL.fullmatch(rest)
    if match is None:
        raise _bad(line, "/call takes a tool name and optional JSON object arguments, like '/call add {\"a\": 1}'")
    name, args_text = match.group(1), match.group(2).strip()
    if not args_text:
        return name, {}
    try:
        args = json.loads(args_text)
    except ValueError as exc:
        raise _bad(line, f"the arguments of /call are not valid JSON ({exc})") from None
    if not isinstance(args, dict):
        raise _bad(line, "the arguments of /call must be a JSON object")
    return name, args


def _result_text(content: str) -> str:
    try:
        parsed = json.loads(content)
    except ValueError:
        return json.dumps(content)
    return json.dumps(parsed, separators=(",", ":"), sort_keys=True)


def _result_lines(assistant: AssistantMessage, results: Sequence[ToolMessage]) -> str:
    order = {call.id: i for i, call in enumerate(assistant.tool_calls)}
    names = {call.id: call.name for call in assistant.tool_calls}
    ordered = sorted(results, key=lambda m: order.get(m.tool_call_id, len(order)))
    return "\n".join(f"{names.get(m.tool_call_id, m.name)} -> {_result_text(m.content)}" for m in ordered)


def _described(message: Message | None) -> str:
    """One line per attachment of the user message, so tests see what reached the model."""
    if not isinstance(message, UserMessage):
        return ""
    lines = [
        f"\n[attached {a.url} ({a.media_type})]"
        if a.url is not None
        else f"\n[attached {a.filename or 'file'} ({a.media_type}, {a.size} bytes)]"
        for a in message.attachments
    ]
    return "".join(lines)


def _assistant_count(messages: list[Message]) -> int:
    """The assistant messages so far: call ids count them, so they stay unique across steps and turns."""
    return operator.countOf(map(type, messages), AssistantMessage)


def _plan(
    messages: list[Message], user_index: int, user_text: str, directives: _Directives, *, offers_reply: bool
) -> tuple[str, list[ToolCall]]:
    """Decide this step's answer text and tool calls."""
    last_assistant: AssistantMessage | None = None
    results: list[ToolMessage] = []
    for message in messages[user_index + 1 :]:
        if isinstance(message, AssistantMessage):
            last_assistant, results = message, []
        elif isinstance(message, ToolMessage):
            results.append(message)

    if last_assistant is None and directives.calls:
        step = _assistant_count(messages)
        calls = [ToolCall(id=f"call_{step}_{i}", name=n, arguments=a) for i, (n, a) in enumerate(directives.calls)]
        return "\n".join(directives.say), calls
    if directives.json_given:
        # Once eve__reply was called, answer in text so an engine that asks again cannot loop.
        replied = last_assistant is not None and any(c.name == REPLY_TOOL for c in last_assistant.tool_calls)
        if offers_reply and isinstance(directives.json_value, dict) and not replied:
            return "", [
                ToolCall(id=f"call_{_assistant_count(messages)}_0", name=REPLY_TOOL, arguments=directives.json_value)
            ]
        return compact_json(directives.json_value), []
    if directives.reply:
        return "\n".join(directives.reply), []
    if last_assistant is not None and results:
        return _result_lines(last_assistant, results), []
    if directives.say and not directives.calls:
        return "\n".join(directives.say), []
    return f"echo: {user_text}{_described(messages[user_index] if user_index >= 0 else None)}", []


class TestModel:
    """The offline, deterministic `test` model (see the module docstring for its directives).

    It never touches the network or imports a provider library, and answers instantly unless
    asked to `/delay`. Usage counts words: input tokens are the words of all messages sent,
    output tokens the words produced; it reports no cost.
    """

    __test__ = False

    def __init__(self, model_id: str = "test") -> None:
        """Create the model.

        Args:
            model_id: The id it was resolved from (`test` or `test/<anything>`).
        """
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        """The id this model was resolved from."""
        return self._model_id

    def __repr__(self) -> str:
        return f"TestModel({self._model_id!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Answer the request as the directives of its newest user message say.

        Raises:
            ModelError: On `/fail`, or when a directive is malformed (both non-retryable).
        """
        messages = list(request.messages)
        user_index = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], UserMessage)), -1)
        user_text = messages[user_index].content if user_index >= 0 else ""
        if is_summary_request(user_text):  # eve compacting the session: see test_summary
            summary = summarize(user_text)
            for word in split_words(summary):
                yield TextDelta(text=word)
            usage = Usage(input_tokens=input_tokens(messages), output_tokens=count_words(summary))
            yield Finish(reason="stop", usage=usage)
            return
        directives = parse_directives(user_text)
        if directives.fail is not None:
            raise ModelError(directives.fail, retryable=False)
        offers_reply = any(tool.name == REPLY_TOOL for tool in request.tools)
        text, calls = _plan(messages, user_index, user_text, directives, offers_reply=offers_reply)

        delay = directives.delay_ms / 1000
        for word in split_words(text):
            if delay:
                await asyncio.sleep(delay)
            yield TextDelta(text=word)
        for event in tool_call_events(calls):
            if delay and isinstance(event, ToolInputDelta):
                await asyncio.sleep(delay)
            yield event
        output = count_words(text) + sum(count_words(arguments_text(call)) for call in calls)
        yield Finish(
            reason="tool-calls" if calls else "stop",
            usage=Usage(input_tokens=input_tokens(messages), output_tokens=output),
        )
