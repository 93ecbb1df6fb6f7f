"""Calls that start, feed or stop tasks: subagent calls, tool tasks, served tools, `eve__task_cancel`.

A tool marked `@tool(task=True)` runs as a task: the call answers at once with a receipt
(`{"status": "working", "taskId"}`) after `task.started` with `kind: "tool"`, and the tool runs
as a durable workflow tool in a session of its own (a child session with no model), whose end
settles the task. A served tool (`@tool(serve=True)`) stays available: a later call with its
`taskId` gives it more input, which `ctx.reply` hands to the body.

Here too: a step's task calls (`run_task_calls`) and the turn of a tool task's own session
(`run_tool_task`).
"""

from __future__ import annotations

import json
from typing import Any

from eve_runtime.checkpoint import CallRecord, TaskState
from eve_runtime.events.actions import ActionResult, ActionsRequested, tool_call_action
from eve_runtime.events.catalog import StepAt
from eve_runtime.events.tasks import TaskStarted
from eve_runtime.ids import new_session_id
from eve_runtime.messages import ToolCall, ToolMessage
from eve_runtime.models.base import ToolDefinition
from eve_runtime.outcomes import ToolOutcome
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.tasks.delegation import (
    MAX_WORKING_TASKS,
    TASK_CANCEL,
    TASK_WAIT,
    delegation_tools,
    dispatch,
    give_work,
    new_task_id,
    refusal,
    task_cancel_call,
    working_tasks,
)
from eve_runtime.tasks.ports import TaskSession, TaskTurn

__all__ = [
    "dispatch_tool_task",
    "run_task_call",
    "run_task_calls",
    "run_tool_task",
    "task_tool_names",
    "tool_task_names",
    "with_task_id",
]


def with_task_id(schema: dict[str, Any]) -> dict[str, Any]:
    """A served tool's input schema, plus the optional `taskId` that gives an existing task more input."""
    properties = dict(schema.get("properties", {}))
    properties["taskId"] = {
        "type": "string",
        "description": "The id of a task this tool started, to give it this input. Omit it to start a new task.",
    }
    return {**schema, "properties": properties}


def tool_task_names(agent: RuntimeAgent) -> set[str]:
    """The agent's tools that run as tasks (`@tool(task=True)`)."""
    return {name for name, tool in agent.tools.items() if tool.options.task}


def task_tool_names(agent: RuntimeAgent, *, is_root: bool) -> frozenset[str]:
    """The names whose calls start or steer tasks, made once per agent (`RuntimeAgent.derive`)."""

    def made() -> frozenset[str]:
        delegation, tool_tasks = delegation_tools(agent, is_root=is_root), tool_task_names(agent)
        return frozenset({*delegation, *tool_tasks, TASK_WAIT, TASK_CANCEL} if delegation or tool_tasks else ())

    return agent.derive(("task tools", is_root), made)


async def dispatch_tool_task(session: TaskSession, call: ToolCall, at: StepAt) -> ToolOutcome:
    """Start a tool task (or give a served one more input): the work runs in a session of its own."""
    state = session.state
    if call.arguments.get("taskId") is not None:
        return await _serve_again(session, call, at)
    if len(working_tasks(state)) >= MAX_WORKING_TASKS:
        return refusal(call, "TOO_MANY_TASKS", f"At most {MAX_WORKING_TASKS} tasks can work at once.")
    task = TaskState(
        task_id=new_task_id(call.name),
        name=call.name,
        kind="tool",
        node_id=session.agent.manifest.node_id,
        child_session_id=new_session_id(),
        call_id=call.id,
        turn_id=session.turn.turn_id,
    )
    state.tasks[task.task_id] = task
    text = f"Started task {task.task_id}. Its result will arrive in a <task_result> message."
    return await _give(session, task, call, at, text, new_child=True)


async def _serve_again(session: TaskSession, call: ToolCall, at: StepAt) -> ToolOutcome:
    task_id = str(call.arguments["taskId"])
    task = session.state.tasks.get(task_id)
    if task is None or task.kind != "tool" or task.name != call.name:
        return refusal(call, "UNKNOWN_TASK", f"There is no task {task_id!r} of {call.name} in this session.")
    if task.ended:
        return refusal(call, "TASK_ENDED", f"Task {task_id} has ended; call {call.name} without taskId to start one.")
    if task.status == "working":
        return refusal(call, "TASK_BUSY", f"Task {task_id} is still working; wait for its result first.")
    task.status, task.call_id, task.turn_id = "working", call.id, session.turn.turn_id
    text = f"Sent to task {task.task_id}. Its result will arrive in a <task_result> message."
    return await _give(session, task, call, at, text, new_child=False)


async def _give(
    session: TaskSession, task: TaskState, call: ToolCall, at: StepAt, text: str, *, new_child: bool
) -> ToolOutcome:
    """`task.started` and the receipt, durable before the task's session gets the work."""
    session.emit(TaskStarted(task))
    outcome = ToolOutcome(
        call=call, status="completed", output={"status": "working", "taskId": task.task_id}, model_content=text
    )
    session.emit(ActionResult(at, outcome))
    await session.flush()
    await give_work(session, task, "", new_child=new_child, tool_call=call)
    return outcome


async def run_task_call(
    session: TaskSession,
    call: ToolCall,
    delegation: dict[str, tuple[str, ToolDefinition]],
    at: StepAt,
) -> ToolOutcome:
    """Run a delegation call, a tool task or `eve__task_cancel`, emitting its `action.result` (and task events)."""
    if call.name == TASK_CANCEL:
        outcome = await task_cancel_call(session, call)
    elif call.name not in delegation:
        outcome = await dispatch_tool_task(session, call, at)
        if not outcome.is_error:
            return outcome
    else:
        outcome = await dispatch(session, call, delegation[call.name][0], at)
        if not outcome.is_error:
            return outcome  # dispatch emitted the receipt between `task.started` and `agent.started`
    session.emit(ActionResult(at, outcome))
    return outcome


async def run_task_calls(
    runner: TaskTurn,
    calls: list[ToolCall],
    outcomes: dict[str, ToolOutcome],
    at: StepAt,
    *,
    asking: bool,
) -> ToolCall | None:
    """Start tasks and stop them; returns the `eve__task_wait` call when the turn should wait now."""
    session = runner.session
    wait: ToolCall | None = None
    for call in calls:
        if call.name != TASK_WAIT:
            outcomes[call.id] = await run_task_call(session, call, runner.delegation, at)
    for call in calls:
        if call.name != TASK_WAIT:
            continue
        if wait is None and not asking and not runner.task_results and working_tasks(session.state):
            wait = call  # answered when the wait ends
            continue
        text = "A task result arrived." if runner.task_results else "No task is working."
        outcomes[call.id] = ToolOutcome(call=call, status="completed", output=text, model_content=text)
        session.emit(ActionResult(at, outcomes[call.id]))
    return wait


async def run_tool_task(runner: TaskTurn, record: CallRecord) -> None:
    """A tool task's session: run its one call (resuming it after a restart), and end with its result."""
    session = runner.session
    turn = session.turn
    call = ToolCall(id=record.id, name=record.name, arguments=record.arguments)
    done = next((m for m in session.history if isinstance(m, ToolMessage) and m.tool_call_id == call.id), None)
    if done is None:
        journal = next((c.journal for c in turn.execute if c.id == call.id), None)
        if not turn.execute:  # the first attempt: its start record is durable before it runs
            session.emit(ActionsRequested(runner.step_at(0), [tool_call_action(call)]))
            await session.flush()
        turn.execute = []
        outcome = (await runner.run_tools([call], 0, journals={call.id: journal or []}))[call.id]
        if runner.cancel_requested:
            await runner.finish_cancelled([])
            return
    else:  # it finished before a restart: its recorded result stands
        outcome = ToolOutcome(
            call=call,
            status="failed" if done.is_error else "completed",
            output=_parsed(done.content),
            model_content=done.content,
            is_error=done.is_error,
        )
    if outcome.status == "completed":
        await session.end_turn_completed(history=[], result=outcome.output)
    else:
        error = outcome.error or {"code": "EXECUTION_FAILED", "message": outcome.model_content}
        await session.end_turn_failed(str(error.get("code", "EXECUTION_FAILED")), str(error.get("message", "")), None)


def _parsed(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content
