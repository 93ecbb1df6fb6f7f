"""`FunctionModel`: a model whose answers come from a Python function, for tests.

Modelled on pydantic-ai's `FunctionModel`. Give it a function that looks at the conversation
and returns the answer:

```python
def respond(messages: list[Message], info: FunctionInfo) -> str | ToolCall:
    if info.call_count == 1:
        return ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
    return "the sum is 3"

model = FunctionModel(respond)
```

or an async generator (`stream_function`) that yields text pieces and/or
[`ModelEvent`][eve_runtime.models.base.ModelEvent]s. Either way the model turns what it gets into
the event stream a real provider would produce, ending with a `Finish` whose usage is counted
like the `test` model's (words in, words out).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass

from eve_runtime.messages import AssistantMessage, Message, ToolCall
from eve_runtime.models.base import (
    Finish,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolDefinition,
    Usage,
)
from eve_runtime.models.test_model import split_words, tool_call_events
from eve_runtime.models.token_count import arguments_text, count_words, input_tokens

__all__ = ["FunctionInfo", "FunctionModel", "FunctionReturn", "FunctionStreamItem"]


@dataclass(frozen=True)
class FunctionInfo:
    """What a `FunctionModel`'s function knows besides the messages."""

    tools: Sequence[ToolDefinition]
    """The tools offered in this request."""
    settings: ModelSettings
    """The request's settings."""
    call_count: int
    """Which call of this model this is, counting from 1."""
    model_id: str
    """The model's id."""


FunctionReturn = str | ToolCall | Sequence[ToolCall] | AssistantMessage
"""What a function may return: answer text, one or several tool calls, or a whole assistant message."""

FunctionStreamItem = str | ToolCall | ModelEvent
"""What a stream function may yield: a text piece, a complete tool call, or any model event."""

ModelFunction = Callable[[list[Message], FunctionInfo], FunctionReturn | Awaitable[FunctionReturn]]
StreamFunction = Callable[[list[Message], FunctionInfo], AsyncIterator[FunctionStreamItem]]


class FunctionModel:
    """A model that answers by calling a Python function (for tests).

    Exceptions the function raises propagate unchanged, so a test can raise
    `ModelError(..., retryable=True)` to exercise retries.
    """

    __test__ = False

    def __init__(
        self,
        function: ModelFunction | None = None,
        *,
        stream_function: StreamFunction | None = None,
        model_id: str = "function",
    ) -> None:
        """Create the model from exactly one of `function` and `stream_function`.

        Args:
            function: `(messages, info) -> str | ToolCall | Sequence[ToolCall] | AssistantMessage`,
                sync or async.
            stream_function: An async generator `(messages, info)` yielding text pieces (`str`),
                complete `ToolCall`s, or `ModelEvent`s. If it yields a `Finish`, the stream ends there.
            model_id: The id the model reports.

        Raises:
            TypeError: Neither or both functions were given.
        """
        if (function is None) == (stream_function is None):
            raise TypeError("FunctionModel needs exactly one of `function` and `stream_function`")
        self.function = function
        self.stream_function = stream_function
        self._model_id = model_id
        self.call_count = 0
        """How many times the model was called."""

    @property
    def model_id(self) -> str:
        """The id the model reports."""
        return self._model_id

    def __repr__(self) -> str:
        return f"FunctionModel({self._model_id!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Call the function and stream its answer as model events."""
        self.call_count += 1
        messages = list(request.messages)
        info = FunctionInfo(
            tools=tuple(request.tools), settings=request.settings, call_count=self.call_count, model_id=self._model_id
        )
        events: AsyncGenerator[ModelEvent, None]
        if self.function is not None:
            events = _answer_events(await _resolve(self.function(messages, info)))
        else:
            assert self.stream_function is not None
            events = _stream_events(self.stream_function(messages, info))
        output = 0
        saw_call = False
        async with aclosing(events):
            async for event in events:
                if isinstance(event, Finish):
                    yield event
                    return
                if isinstance(event, (TextDelta, ReasoningDelta)):
                    output += count_words(event.text)
                elif isinstance(event, ToolCallFinished):
                    saw_call = True
                    output += count_words(arguments_text(event.call))
                yield event
        yield Finish(
            reason="tool-calls" if saw_call else "stop",
            usage=Usage(input_tokens=input_tokens(messages), output_tokens=output),
        )


async def _resolve(value: FunctionReturn | Awaitable[FunctionReturn]) -> FunctionReturn:
    if inspect.isawaitable(value):
        return await value
    return value


async def _answer_events(answer: FunctionReturn) -> AsyncGenerator[ModelEvent, None]:
    if isinstance(answer, str):
        message = AssistantMessage(content=answer)
    elif isinstance(answer, ToolCall):
        message = AssistantMessage(tool_calls=(answer,))
    elif isinstance(answer, AssistantMessage):
        message = answer
    else:
        message = AssistantMessage(tool_calls=tuple(answer))
    for piece in split_words(message.reasoning):
        yield ReasoningDelta(text=piece)
    for piece in split_words(message.content):
        yield TextDelta(text=piece)
    for event in tool_call_events(message.tool_calls):
        yield event


async def _stream_events(items: AsyncIterator[FunctionStreamItem]) -> AsyncGenerator[ModelEvent, None]:
    try:
        async for item in items:
            if isinstance(item, str):
                yield TextDelta(text=item)
            elif isinstance(item, ToolCall):
                for event in tool_call_events((item,)):
                    yield event
            else:
                yield item
                if isinstance(item, Finish):
                    return
    finally:
        # The consumer may stop early (after a Finish, or a cancel): close the user's generator too.
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()
