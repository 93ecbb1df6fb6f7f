"""Tools: one function per file in `agent/tools/`, options with `@tool`, built-ins off with `disable_tool()`.

A tool is the function in `agent/tools/<name>.py` named like the file (or the one function there
decorated with `@tool`). Its name is the file name, its description the docstring, its input
schema the signature. Sync functions run in a thread, async ones as tasks, and generator
functions stream progress: every `yield` publishes an `action.partial`, the return value (or the
last yield) is the result.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from eve_runtime.authoring.validation import Problems
from eve_runtime.errors import DefinitionError

__all__ = ["ApprovalPolicy", "DisabledTool", "ToolOptions", "disable_tool", "tool", "tool_options"]

F = TypeVar("F", bound=Callable[..., Any])

ApprovalPolicy = bool | Callable[..., Any]
"""`True`/`False`, or a function called per call (with the tool input) that decides."""

_OPTIONS_ATTRIBUTE = "__eve_tool__"


@dataclass(frozen=True)
class ToolOptions:
    """Options set with `@tool(...)` on a tool function."""

    needs_approval: ApprovalPolicy = False
    """Ask a person before each call (`True`), never (`False`), or let a policy function decide per call."""
    description: str | None = None
    """The description the model sees; defaults to the function's docstring."""
    ends_turn: bool = False
    """End the turn after this call when no other tool ran in the step."""
    to_model_output: Callable[[Any], Any] | None = None
    """Turn the result into what the model sees (the stream still gets the full result)."""
    workflow: bool = False
    """A durable tool: after a restart its body runs again, replaying its journaled `ctx` calls."""
    task: bool = False
    """Runs in the background as a task: the call answers with a receipt, the result comes later."""
    serve: bool = False
    """A task that stays available: later calls with its `taskId` give it more input (`ctx.reply`)."""


@dataclass(frozen=True)
class DisabledTool:
    """The marker `disable_tool()` returns: removes the framework tool of the same file name."""


@overload
def tool(function: F, /) -> F: ...


@overload
def tool(
    *,
    needs_approval: ApprovalPolicy = False,
    description: str | None = None,
    ends_turn: bool = False,
    to_model_output: Callable[[Any], Any] | None = None,
    workflow: bool = False,
    task: bool = False,
    serve: bool = False,
) -> Callable[[F], F]: ...


def tool(
    function: F | None = None,
    /,
    *,
    needs_approval: ApprovalPolicy = False,
    description: str | None = None,
    ends_turn: bool = False,
    to_model_output: Callable[[Any], Any] | None = None,
    workflow: bool = False,
    task: bool = False,
    serve: bool = False,
) -> F | Callable[[F], F]:
    """Mark a function as the tool of its file and set its options.

    The function is returned unchanged (so it stays callable in tests); eve reads the options
    when it compiles the agent. The tool is still named after its file.

    Args:
        function: The tool function (when used as a bare `@tool`).
        needs_approval: `True` to ask a person before every call, or a function
            `(tool_input) -> bool` deciding per call.
        description: Overrides the docstring as the model-facing description.
        ends_turn: End the turn after this call when no other tool ran in the step.
        to_model_output: Maps the result to what the model sees.
        workflow: Make an `async` tool durable: its `ctx.ask`, `ctx.sleep` and `ctx.step` are
            journaled, and after a restart the body runs again replaying them, instead of the
            call being abandoned. Side effects belong in `ctx.step` so they run once.
        task: Run the tool in the background as a task (a durable workflow tool in a session of
            its own): the call answers at once with a receipt, the turn goes on, and the result
            reaches the model as a `<task_result>` message when the tool returns.
        serve: A task that stays available (implies `task`): the model may call the tool again
            with the task's `taskId` to give it more input. `await ctx.reply(result)` settles the
            current call with `result` and returns the next call's input; returning ends it.

    Example:
        ```python
        from eve_runtime import tool

        @tool(needs_approval=True)
        def delete_file(path: str) -> str:
            \"\"\"Delete a file in the workspace.\"\"\"
            ...
        ```
    """
    problems = Problems()
    problems.when(
        not isinstance(needs_approval, bool) and not callable(needs_approval),
        "needs_approval",
        "@tool: 'needs_approval' must be True, False or a function",
    )
    problems.when(
        description is not None and (not isinstance(description, str) or not description.strip()),
        "description",
        "@tool: 'description' must be a non-empty string",
    )
    problems.when(not isinstance(ends_turn, bool), "ends_turn", "@tool: 'ends_turn' must be True or False")
    problems.when(
        to_model_output is not None and not callable(to_model_output),
        "to_model_output",
        "@tool: 'to_model_output' must be a function",
    )
    problems.when(not isinstance(workflow, bool), "workflow", "@tool: 'workflow' must be True or False")
    problems.when(not isinstance(task, bool), "task", "@tool: 'task' must be True or False")
    problems.when(not isinstance(serve, bool), "serve", "@tool: 'serve' must be True or False")
    problems.raise_any()
    task = task or serve
    options = ToolOptions(
        needs_approval=needs_approval,
        description=description,
        ends_turn=ends_turn,
        to_model_output=to_model_output,
        workflow=workflow or task,
        task=task,
        serve=serve,
    )

    def mark(target: F) -> F:
        if not callable(target) or isinstance(target, type):
            raise DefinitionError("@tool must decorate a function", field=None)
        if (workflow or task) and not inspect.iscoroutinefunction(target):
            field = "serve" if serve else "task" if task else "workflow"
            raise DefinitionError(f"@tool({field}=True) needs an `async def` function", field=field)
        setattr(target, _OPTIONS_ATTRIBUTE, options)
        return target

    if function is not None:
        return mark(function)
    return mark


def tool_options(function: Callable[..., Any]) -> ToolOptions | None:
    """The options `@tool` set on a function, or None when it was not decorated."""
    options = getattr(function, _OPTIONS_ATTRIBUTE, None)
    return options if isinstance(options, ToolOptions) else None


def disable_tool() -> DisabledTool:
    """Remove the framework tool named like this file (`agent/tools/bash.py` removes `bash`).

    Example:
        ```python
        # agent/tools/bash.py
        from eve_runtime import disable_tool

        bash = disable_tool()
        ```
    """
    return DisabledTool()
