"""Running one tool call: sync functions in threads, async ones as tasks, generators streaming partials.

Whatever a tool does, the call ends in a `ToolOutcome`: a failure (an exception, invalid input,
an unknown tool, an output that is not JSON) is reported to the model and on the stream as a
failed result, and the turn goes on. eve's rule decides the status: `failed` when the tool
raised, or returned an object with a non-empty string `code` and `message`.

A tool that raises is also logged with its traceback (logger `eve.tools`, naming the tool and the
call id), so the file and line reach the server's log (`eve dev`'s log file, which its terminal
UI opens with `/trace`); the model and the stream get the message only.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Executor
from typing import Any

from pydantic_core import to_jsonable_python

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.schema import ToolInputError
from eve_runtime.authoring.state import SessionValues, session_values
from eve_runtime.messages import ToolCall
from eve_runtime.outcomes import ToolOutcome, failed_outcome, redacted_outcome
from eve_runtime.project.runtime_agent import RuntimeTool

__all__ = ["json_safe", "run_tool"]

PartialSink = Callable[[Any], None]
logger = logging.getLogger("eve.tools")


def _raised(call: ToolCall, exc: Exception) -> ToolOutcome:
    """The outcome of a call whose tool raised `exc`, logged with its traceback."""
    logger.warning("the tool %s raised %s (call %s)", call.name, type(exc).__name__, call.id, exc_info=exc)
    return failed_outcome(call, "ACTION_RESULT_FAILED", str(exc) or type(exc).__name__, name=type(exc).__name__)


def json_safe(value: Any) -> Any:
    """The value as plain JSON data; raises ValueError/TypeError when it cannot be."""
    plain = to_jsonable_python(value)
    return json.loads(json.dumps(plain, allow_nan=False))


def _settle(call: ToolCall, tool: RuntimeTool, output: Any) -> ToolOutcome:
    try:
        output = json_safe(output)
    except (TypeError, ValueError) as exc:
        return failed_outcome(call, "OUTPUT_NOT_SERIALIZABLE", f"The tool returned a value that is not JSON: {exc}")
    if isinstance(output, dict):
        code, message = output.get("code"), output.get("message")
        if isinstance(code, str) and code and isinstance(message, str) and message:
            return ToolOutcome(
                call=call,
                status="failed",
                output=output,
                model_content=json.dumps(output, separators=(",", ":")),
                error={"code": code, "message": message},
            )
    projection = tool.options.to_model_output
    model_value = projection(output) if projection is not None else output
    content = model_value if isinstance(model_value, str) else json.dumps(model_value, separators=(",", ":"))
    return ToolOutcome(call=call, status="completed", output=output, model_content=content)


async def run_tool(
    tool: RuntimeTool | None,
    call: ToolCall,
    context: ToolContext,
    *,
    on_partial: PartialSink,
    executor: Executor | None = None,
    values: SessionValues | None = None,
) -> ToolOutcome:
    """Run one call to completion (cancellation propagates to the caller).

    The outcome is masked (`eve_runtime.redaction`): a secret in a tool's output or error text
    never reaches the model.
    """
    return redacted_outcome(
        await _run_tool(tool, call, context, on_partial=on_partial, executor=executor, values=values)
    )


async def _run_tool(
    tool: RuntimeTool | None,
    call: ToolCall,
    context: ToolContext,
    *,
    on_partial: PartialSink,
    executor: Executor | None,
    values: SessionValues | None,
) -> ToolOutcome:
    if call.invalid_arguments is not None:
        return failed_outcome(
            call, "INVALID_TOOL_INPUT", f"The tool input is not a JSON object: {call.invalid_arguments!r}"
        )
    if tool is not None and tool.invoke is not None:  # connection tools: the server checks the input
        try:
            output = await tool.invoke(dict(call.arguments), context)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return _raised(call, exc)
        return _settle(call, tool, output)
    if tool is None or tool.function is None or tool.schema is None:
        return failed_outcome(call, "UNKNOWN_TOOL", f"There is no tool named {call.name!r}.")
    try:
        kwargs = tool.schema.validate(call.arguments)
    except ToolInputError as exc:
        return failed_outcome(call, "INVALID_TOOL_INPUT", str(exc))
    if tool.schema.context_parameter is not None:
        kwargs[tool.schema.context_parameter] = context
    function = tool.function
    loop = asyncio.get_running_loop()
    try:
        with session_values(values if values is not None else SessionValues({})):
            copied = contextvars.copy_context()  # threads see the session's state too
            if tool.schema.kind == "async":
                output = await function(**kwargs)
            elif tool.schema.kind == "sync":
                output = await loop.run_in_executor(executor, copied.run, lambda: function(**kwargs))
            elif tool.schema.kind == "async-generator":
                output = await _drain_async(function(**kwargs), on_partial)
            else:
                output = await loop.run_in_executor(
                    executor, copied.run, lambda: _drain_sync(function(**kwargs), loop, on_partial)
                )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a tool's failure is the model's information, never the turn's end
        return _raised(call, exc)
    return _settle(call, tool, output)


def _partial(value: Any) -> Any:
    try:
        return json_safe(value)
    except (TypeError, ValueError):
        return repr(value)


async def _drain_async(generator: AsyncIterator[Any], on_partial: PartialSink) -> Any:
    last: Any = None
    async for value in generator:
        last = value
        on_partial(_partial(value))
    return last


def _drain_sync(generator: Iterator[Any], loop: asyncio.AbstractEventLoop, on_partial: PartialSink) -> Any:
    """Iterate a generator in a worker thread; its return value wins over the last yield unless None."""
    last: Any = None
    while True:
        try:
            value = next(generator)
        except StopIteration as stop:
            return stop.value if stop.value is not None else last
        last = value
        partial = _partial(value)
        loop.call_soon_threadsafe(on_partial, partial)
