"""Delegation: subagents as tasks in child sessions, and the task tools around them.

A call to a subagent's tool (or to the built-in `agent`, a copy of the root agent) starts a
*task*: a child session with its own stream works on the message while the parent's turn goes
on. The call is answered at once with a receipt (`Started task <id>...`); the child's reply
arrives later as a `<task_result>` user message, when the parent emits `task.settled`. A later
call with the same `taskId` sends the child another message. No turn ends while one of its tasks
works: it waits (`turn.waiting` with `on: "tasks"`). `eve__task_wait` waits on purpose,
`eve__task_cancel` stops a task's current work, and a `[Tasks]` note keeps the model informed.
"""

from __future__ import annotations

import json
import secrets
import string
from typing import Any

from eve_runtime.checkpoint import SessionState, TaskState
from eve_runtime.events.actions import ActionResult, subagent_call_action, tool_call_action
from eve_runtime.events.catalog import StepAt
from eve_runtime.events.tasks import AgentStarted, TaskSettled, TaskStarted
from eve_runtime.events.usage import add_reported
from eve_runtime.ids import new_session_id
from eve_runtime.messages import ToolCall, UserMessage
from eve_runtime.models.base import ToolDefinition
from eve_runtime.outcomes import ToolOutcome
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.tasks.ports import TaskSession
from eve_runtime.tasks.relay import apply_relay, withdraw_relayed
from eve_runtime.telemetry.ids import TraceContext, call_context

__all__ = [
    "AGENT_TOOL",
    "receipt",
    "refusal",
    "action_entry",
    "presentation_label",
    "CHILD_PREFIX",
    "MAX_WORKING_TASKS",
    "TASK_CANCEL",
    "TASK_WAIT",
    "cancel_tasks",
    "delegation_tools",
    "dispatch",
    "first_message",
    "give_work",
    "new_task_id",
    "settle_task",
    "task_cancel_call",
    "task_result_message",
    "task_tool_definitions",
    "tasks_note",
    "working_tasks",
]

AGENT_TOOL = "agent"
CHILD_PREFIX = "node:"
"""A child session's `agent` field: `node:` and the node id of the agent it runs."""
TASK_WAIT = "eve__task_wait"
TASK_CANCEL = "eve__task_cancel"
MAX_WORKING_TASKS = 32
_ID_ALPHABET = string.ascii_lowercase + string.digits
_GUIDANCE = (
    " It does not see this conversation, so put everything it needs in message. To correct or continue an agent "
    "task, call this tool again with its taskId; without taskId, each call starts a new agent."
)
_AGENT_DESCRIPTION = (
    "Delegate work to a copy of yourself: a fresh agent with your instructions and tools but none of this conversation."
)
_WAIT_DESCRIPTION = (
    "Wait silently until any of your tasks has a result, a new message arrives, or timeoutSeconds pass. Tasks keep "
    "running and their results reach you without calling this; use it only to withhold a reply until a result "
    "arrives. Waiting never stops a task."
)
_CANCEL_DESCRIPTION = (
    "Stop a task's current work. That work never reports back. An agent stays available: call its tool with its "
    "taskId to give it new work."
)


def _agent_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "message": {
                "type": "string",
                "description": "The message to send to the agent, with everything it needs to do the work.",
            },
            "taskId": {
                "type": "string",
                "description": 'The id of a task this tool started, copied from its "Started task" receipt or the '
                "[Tasks] note, to send it this input. Omit it to start a new task.",
            },
        },
        "required": ["message"],
        "additionalProperties": False,
    }


def delegation_tools(agent: RuntimeAgent, *, is_root: bool) -> dict[str, tuple[str, ToolDefinition]]:
    """The tools that start tasks, by name: `(node id of the agent they delegate to, definition)`.

    Made once per agent (`RuntimeAgent.derive`): do not change what it returns.
    """
    return agent.derive(("delegation", is_root), lambda: _made_delegation_tools(agent, is_root))


def _made_delegation_tools(agent: RuntimeAgent, is_root: bool) -> dict[str, tuple[str, ToolDefinition]]:
    tools: dict[str, tuple[str, ToolDefinition]] = {}
    for name, child in agent.subagents.items():
        if child.manifest.exposed_as_tool:
            description = (child.manifest.description or name) + _GUIDANCE
            tools[name] = (child.manifest.node_id, ToolDefinition(name, description, _agent_schema()))
    statuses = {f.name: f.status for f in agent.manifest.framework_tools}
    if is_root and statuses.get(AGENT_TOOL) == "active" and AGENT_TOOL not in agent.tools:
        tools[AGENT_TOOL] = (AGENT_TOOL, ToolDefinition(AGENT_TOOL, _AGENT_DESCRIPTION + _GUIDANCE, _agent_schema()))
    return tools


def task_tool_definitions() -> list[ToolDefinition]:
    """`eve__task_wait` and `eve__task_cancel`: offered when an agent can start tasks."""
    wait = {
        "type": "object",
        "properties": {"timeoutSeconds": {"type": "integer", "minimum": 1}},
        "additionalProperties": False,
    }
    cancel = {
        "type": "object",
        "properties": {"taskId": {"type": "string", "minLength": 1}},
        "required": ["taskId"],
        "additionalProperties": False,
    }
    return [
        ToolDefinition(TASK_WAIT, _WAIT_DESCRIPTION, wait),
        ToolDefinition(TASK_CANCEL, _CANCEL_DESCRIPTION, cancel),
    ]


def new_task_id(name: str) -> str:
    """`<tool name>-<6 characters>`."""
    return f"{name}-" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(6))


def first_message(name: str, description: str | None, message: str) -> str:
    """What a new child session reads first: who it is, then the caller's message."""
    about = f"\nDescription: {description}" if description else ""
    return (
        f'You are the subagent "{name}".{about}\n\n'
        "The caller delegated the following task to you. Complete it and return the result directly. "
        "The caller may send follow-up messages after you answer.\n\n"
        f"Caller message:\n{message}"
    )


def tasks_note(state: SessionState) -> str | None:
    """The `[Tasks]` note: working tasks, then up to 10 idle ones that accept more input."""
    if not state.tasks:
        return None
    working = [t for t in state.tasks.values() if t.status == "working"]
    idle = [t for t in state.tasks.values() if t.status == "idle"][-10:]
    lines = ["[Tasks]", "<tasks>"]
    lines += [f'<task id="{t.task_id}" tool="{t.name}" status="working"/>' for t in working]
    lines.append("</tasks>")
    if idle:
        lines += ["<idle>", *[f'<task id="{t.task_id}" tool="{t.name}"/>' for t in idle], "</idle>"]
    return "\n".join(lines)


def task_result_message(task: TaskState, status: str, body: str) -> UserMessage:
    """How a settled task's result reaches the model."""
    return UserMessage(
        content=f'<task_result id="{task.task_id}" tool="{task.name}" status="{status}">{body}</task_result>'
    )


def receipt(call: ToolCall, text: str) -> ToolOutcome:
    """A task call's answer: it was accepted, the result comes later."""
    return ToolOutcome(call=call, status="completed", output=text, model_content=text)


def refusal(call: ToolCall, code: str, message: str) -> ToolOutcome:
    """A task call that was refused (`code` is the error the model reads)."""
    return ToolOutcome(
        call=call,
        status="failed",
        output={"code": code, "message": message},
        model_content=f"{code}: {message}",
        error={"code": code, "message": message},
        is_error=True,
    )


async def dispatch(session: TaskSession, call: ToolCall, node_id: str, at: StepAt) -> ToolOutcome:
    """Start a task for a delegation call (or send its child another message); emits the task events."""
    state = session.state
    turn = session.turn
    message = call.arguments.get("message")
    if not isinstance(message, str) or not message.strip():
        return refusal(call, "INVALID_TOOL_INPUT", "message: a non-empty string is required")
    task_id = call.arguments.get("taskId")
    timeout = session.host.delegation_timeout(node_id)
    deadline = session.host.now() + timeout if timeout is not None else None
    if task_id is not None:
        task = state.tasks.get(str(task_id))
        if task is None:
            return refusal(call, "UNKNOWN_TASK", f"There is no task {task_id!r} in this session.")
        if task.name != call.name:
            return refusal(call, "AGENT_MISMATCH", f"Task {task_id!r} belongs to {task.name!r}, not {call.name!r}.")
        if task.status == "working":
            return refusal(call, "AGENT_BUSY", f"Task {task_id!r} is still working; wait for its result first.")
        if not await session.host.session_active(task.child_session_id):
            return refusal(call, "AGENT_SESSION_ENDED", f"The session of task {task_id!r} has ended.")
        task.status, task.call_id, task.turn_id, task.deadline = "working", call.id, turn.turn_id, deadline
        text = f"Sent to task {task.task_id}. Its reply will arrive in a <task_result> message."
        _emit_started(session, task, call, at, text, new_child=False)
        await session.flush()  # the parent knows of the work before the child gets it
        await give_work(session, task, message, new_child=False)
        return receipt(call, text)
    if sum(1 for t in state.tasks.values() if t.status == "working") >= MAX_WORKING_TASKS:
        return refusal(call, "TOO_MANY_TASKS", f"At most {MAX_WORKING_TASKS} tasks can work at once.")
    task_id = new_task_id(call.name)
    task = TaskState(
        task_id=task_id,
        name=call.name,
        node_id=node_id,
        child_session_id=new_session_id(),
        call_id=call.id,
        turn_id=turn.turn_id,
        deadline=deadline,
    )
    state.tasks[task_id] = task
    text = (
        f"Started task {task_id}. Its result will arrive in a <task_result> message. To send it another message, "
        f"call {call.name} again with taskId {task_id}."
    )
    _emit_started(session, task, call, at, text, new_child=True)
    await session.flush()  # the parent knows of the child before it exists: a crash now loses nothing
    await give_work(session, task, message, new_child=True)
    return receipt(call, text)


async def give_work(
    session: TaskSession, task: TaskState, message: str, *, new_child: bool, tool_call: ToolCall | None = None
) -> None:
    """Create the child of a new task, or give an existing child the task's current message (both once).

    Called again by recovery for tasks the events started, so a crash between the parent's events
    and the child's creation cannot strand a task. A tool task's child runs `tool_call`.
    """
    turn = session.state.turn
    if turn is not None:
        task.principal_id = turn.principal_id  # the child works for the person whose turn this is
    trace = TraceContext.from_json(turn.trace) if turn is not None else None
    # the child joins the parent's trace under the span of the call that started it
    traceparent = call_context(trace, session.session_id, task.call_id).traceparent if trace is not None else None
    if tool_call is not None and new_child:
        task.child_session_id = await session.host.create_child(
            session.session_id, task, "", tool_call=tool_call, traceparent=traceparent
        )
    elif tool_call is not None:
        arguments = {k: v for k, v in tool_call.arguments.items() if k != "taskId"}
        if not await session.host.serve_input(task, arguments):
            error = {"code": "TASK_ENDED", "message": f"Task {task.task_id} has ended."}
            result = settle_task(session, {"taskId": task.task_id, "status": "failed", "error": error})
            if result is not None:
                session.checkpoint_later(history=[result])
    elif new_child:
        child = session.host.agent_for_node(task.node_id, session.root)
        wrapped = first_message(task.name, child.manifest.description, message)
        task.child_session_id = await session.host.create_child(
            session.session_id, task, wrapped, traceparent=traceparent
        )
    elif not await session.host.send_to_child(task, message):
        error = {"code": "AGENT_SESSION_ENDED", "message": f"The session of task {task.task_id} has ended."}
        result = settle_task(session, {"taskId": task.task_id, "status": "failed", "error": error})
        if result is not None:
            session.checkpoint_later(history=[result])


def action_entry(call: ToolCall, delegation: dict[str, tuple[str, ToolDefinition]]) -> dict[str, Any]:
    """A call's entry in `actions.requested`: a `subagent-call` for delegation tools, else a `tool-call`."""
    if call.name not in delegation:
        return tool_call_action(call)
    node_id, definition = delegation[call.name]
    return subagent_call_action(call, node_id, definition.description)


def presentation_label(call: ToolCall) -> str:
    """How a client may title a delegation call: `Researcher: <first line of the message>`."""
    message = str(call.arguments.get("message", "")).strip().splitlines()
    first = message[0] if message else ""
    if len(first) > 80:
        first = first[:79] + "…"
    return f"{call.name[:1].upper()}{call.name[1:]}: {first}"


def _emit_started(
    session: TaskSession, task: TaskState, call: ToolCall, at: StepAt, text: str, *, new_child: bool
) -> None:
    session.emit(TaskStarted(task))
    session.emit(ActionResult(at, receipt(call, text)))
    if new_child:
        session.emit(AgentStarted(task))


def settle_task(session: TaskSession, payload: dict[str, Any]) -> UserMessage | None:
    """Apply a child's report: `task.settled`, and the `<task_result>` message for the model (None if stale)."""
    task = session.state.tasks.get(str(payload.get("taskId")))
    if task is not None and payload.get("final"):
        task.ended = True  # a served tool returned: it takes no more calls
    if task is None or task.status != "working" or payload.get("callId") not in (None, task.call_id):
        return None
    if "relay" in payload:
        apply_relay(session, task, payload)
        return None
    withdraw_relayed(session, task)
    add_reported(session.state.usage, payload.get("usage") or {})
    status = str(payload.get("status", "completed"))
    task.status = "idle"
    if status == "completed":
        body = payload.get("output")
        session.emit(TaskSettled(task, status, output=body))
    else:
        error = payload.get("error") or {"message": f"The task {status}."}
        body = error.get("message", "")
        session.emit(TaskSettled(task, status, error=error))
    text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
    return task_result_message(task, status, text)


async def cancel_tasks(session: TaskSession, *, reason: str, task_ids: list[str] | None = None) -> None:
    """Stop working tasks (all of them, or those named): `task.settled` cancelled, and a cancel to each child."""
    for task in session.state.tasks.values():
        if task.status != "working" or (task_ids is not None and task.task_id not in task_ids):
            continue
        withdraw_relayed(session, task)
        task.status = "idle"
        session.emit(TaskSettled(task, "cancelled", cancel_reason=reason))
        await session.host.cancel(task.child_session_id)


async def task_cancel_call(session: TaskSession, call: ToolCall) -> ToolOutcome:
    """`eve__task_cancel`."""
    task_id = str(call.arguments.get("taskId", ""))
    task = session.state.tasks.get(task_id)
    if task is None:
        return refusal(call, "UNKNOWN_TASK", f"There is no task {task_id!r} in this session.")
    if task.status != "working":
        return receipt(call, f"Task {task_id} had no work to stop.")
    await cancel_tasks(session, reason="cancelled", task_ids=[task_id])
    return receipt(call, f"Stopped task {task_id}.")


def working_tasks(state: SessionState) -> list[TaskState]:
    """The tasks still working."""
    return [t for t in state.tasks.values() if t.status == "working"]
