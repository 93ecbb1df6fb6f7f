"""Running one tool call: sync functions in threads, async ones as tasks, generators streaming partials.

Whatever a tool does, the call ends in a `ToolOutcome`: a failure (an exception, invalid input,
an unknown tool, an output that is not JSON) is reported to the model and on the stream as a
failed result, and the turn goes on. eve's rule decides the status: `failed` when the tool
raised, or returned an object with a non-empty string `code` and `message`.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.schema import ToolInputError
from eve_runtime.authoring.state import SessionValues, session_values
from eve_runtime.messages import ToolCall
from eve_runtime.project.runtime_agent import RuntimeTool

__all__ = ["ToolOutcome", "cancelled_outcome", "refused_outcome", "run_tool"]

OutcomeStatus = Literal["completed", "failed", "rejected", "cancelled"]
PartialSink = Callable[[Any], None]


@dataclass(frozen=True)
class ToolOutcome:
    """How a call ended: what the stream shows and what the model reads."""

    call: ToolCall
    status: OutcomeStatus
    output: Any
    """The JSON result (or, for a failure, its message)."""
    model_content: str
    """What the model receives as the tool's result."""
    error: dict[str, Any] | None = None
    is_error: bool = False
    error_name: str | None = None

    def result_event(self, tool_name: str) -> dict[str, Any]:
        """The `action.result` data fields (without the turn coordinates)."""
        result: dict[str, Any] = {
            "callId": self.call.id,
            "kind": "tool-result",
            "output": self.output,
            "toolName": tool_name,
        }
        if self.error_name is not None:
            result["errorName"] = self.error_name
        if self.is_error:
            result["isError"] = True
        data: dict[str, Any] = {"result": result, "status": "failed" if self.status == "cancelled" else self.status}
        if self.error is not None:
            data["error"] = self.error
        return data


def json_safe(value: Any) -> Any:
    """The value as plain JSON data; raises ValueError/TypeError when it cannot be."""
    plain = to_jsonable_python(value)
    return json.loads(json.dumps(plain, allow_nan=False))


def _failure(call: ToolCall, code: str, message: str, *, name: str | None = None) -> ToolOutcome:
    label = name or "Error"
    return ToolOutcome(
        call=call,
        status="failed",
        output=message,
        model_content=f"{label}: {message}",
        error={"code": code, "message": message, **({"name": name} if name else {})},
        is_error=True,
        error_name=name,
    )


DENIED_MESSAGE = "Tool execution was denied."
IGNORED_MESSAGE = "Ignored because the user continued without responding."


def refused_outcome(
    call: ToolCall, *, request_id: str | None, status: Literal["denied", "ignored"], reason: str | None = None
) -> ToolOutcome:
    """A call that never ran: its approval was denied, or ignored when the person went on talking."""
    code = "TOOL_EXECUTION_DENIED" if status == "denied" else "TOOL_EXECUTION_IGNORED"
    message = (reason or DENIED_MESSAGE) if status == "denied" else IGNORED_MESSAGE
    output: dict[str, Any] = {"code": code, "message": message, "tool": {"result": "not_run"}}
    if request_id is not None:
        output["approval"] = {"requestId": request_id, "status": status}
    return ToolOutcome(
        call=call,
        status="rejected",
        output=output,
        model_content=message,
        error={"code": code, "message": message},
        is_error=True,
    )


def cancelled_outcome(call: ToolCall) -> ToolOutcome:
    """The outcome of a call stopped by a cancel (it stays in history, answered as cancelled)."""
    message = "The call was cancelled before it finished."
    return ToolOutcome(
        call=call,
        status="cancelled",
        output=message,
        model_content=f"Cancelled: {message}",
        error={"code": "CANCELLED", "message": message},
        is_error=True,
    )


def _settle(call: ToolCall, tool: RuntimeTool, output: Any) -> ToolOutcome:
    try:
        output = json_safe(output)
    except (TypeError, ValueError) as exc:
        return _failure(call, "OUTPUT_NOT_SERIALIZABLE", f"The tool returned a value that is not JSON: {exc}")
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
    """Run one call to completion (cancellation propagates to the caller)."""
    if tool is None or tool.function is None or tool.schema is None:
        return _failure(call, "UNKNOWN_TOOL", f"There is no tool named {call.name!r}.")
    if call.invalid_arguments is not None:
        return _failure(call, "INVALID_TOOL_INPUT", f"The tool input is not a JSON object: {call.invalid_arguments!r}")
    try:
        kwargs = tool.schema.validate(call.arguments)
    except ToolInputError as exc:
        return _failure(call, "INVALID_TOOL_INPUT", str(exc))
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
        return _failure(call, "ACTION_RESULT_FAILED", str(exc) or type(exc).__name__, name=type(exc).__name__)
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
