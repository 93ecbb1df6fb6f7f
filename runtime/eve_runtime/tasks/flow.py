"""Tasks over time: a turn waiting on its tasks, results coming back, timeouts, and child reports.

The parent side: while a turn waits on tasks (`turn.waiting` with `on: "tasks"`), a child's
report settles its task and resumes the turn; a message from the person resumes it too; a
cancel stops the tasks and the turn; a task past its delegation timeout settles `TIMED_OUT`.
The child side: when a child session's turn ends, it reports the outcome (and the usage it
spent) to its parent through the parent's inbox, idempotently, again after a crash if needed.
"""

from __future__ import annotations

from typing import Any

from eve_runtime.checkpoint import CallRecord, TaskState
from eve_runtime.events.catalog import TurnAt
from eve_runtime.events.turns import TurnWaiting
from eve_runtime.ids import new_session_id
from eve_runtime.messages import Message, ToolCall, ToolMessage, UserMessage
from eve_runtime.store.base import DeliveryRecord
from eve_runtime.tasks.delegation import AGENT_TOOL, give_work, settle_task, tasks_note, working_tasks
from eve_runtime.tasks.ports import Handled, TaskSession
from eve_runtime.tasks.relay import forward_answers

__all__ = [
    "absorb_results",
    "expire_tasks",
    "handle_while_waiting",
    "next_wake",
    "note_tasks",
    "park_on_tasks",
    "recover_tasks",
]


def next_wake(session: TaskSession) -> float | None:
    """When the session must be looked at again: a wait's timeout or a task's deadline."""
    times = [t.deadline for t in working_tasks(session.state) if t.deadline is not None]
    turn = session.state.turn
    if turn is not None and turn.wait_deadline is not None:
        times.append(turn.wait_deadline)
    return min(times) if times else None


def _resume(session: TaskSession, reason: str, messages: list[Message], consumed: list[str]) -> None:
    """End the wait: answer the `eve__task_wait` call (if any), then the new messages, then run on."""
    turn = session.turn
    history: list[Message] = []
    if turn.wait_call is not None:
        history.append(ToolMessage(tool_call_id=turn.wait_call.id, name=turn.wait_call.name, content=reason))
    history.extend(messages)
    turn.waiting_on_tasks = False
    turn.wait_call = None
    turn.wait_deadline = None
    session.checkpoint_later(history=history, consumed=consumed)


async def expire_tasks(session: TaskSession) -> list[Message]:
    """Settle the working tasks past their deadline as `TIMED_OUT` (stopping their children); their messages."""
    now = session.host.now()
    messages: list[Message] = []
    for task in working_tasks(session.state):
        if task.deadline is not None and task.deadline <= now:
            error = {"code": "TIMED_OUT", "message": f"Task {task.task_id} did not finish within its time limit."}
            message = settle_task(session, {"taskId": task.task_id, "status": "failed", "error": error})
            if message is not None:
                messages.append(message)
                await session.host.cancel(task.child_session_id)
    return messages


async def handle_while_waiting(session: TaskSession, delivery: DeliveryRecord | None) -> Handled:
    """Apply a delivery (or, with None, the clock) to a turn waiting on its tasks."""
    turn = session.turn
    expired = await expire_tasks(session)
    if delivery is None:
        timed_out = turn.wait_deadline is not None and turn.wait_deadline <= session.host.now()
        if expired or timed_out:
            _resume(session, "A task result arrived." if expired else "The wait timed out.", expired, [])
            return "resumed"
        return "parked"
    if delivery.kind == "task":
        message = settle_task(session, delivery.payload)
        results = [*expired, *([message] if message is not None else [])]
        if not results:
            await session.commit(consumed=[delivery.id])
            return "parked"
        _resume(session, "A task result arrived.", results, [delivery.id])
        return "resumed"
    if delivery.kind in ("message", "responses") and await forward_answers(session, delivery):
        return "parked"  # an answer to a child's request: the child settles it and reports back
    if delivery.kind == "message" and not turn.serves(delivery.payload):
        return "deferred"  # another person's message waits for the turn to end (`TurnState.serves`)
    if delivery.kind == "message":
        _resume(session, "A new message arrived.", [*expired, session.join_turn(delivery)], [delivery.id])
        return "resumed"
    if delivery.kind in ("cancel", "reset"):
        if session.names_another_turn(delivery):
            await session.commit(consumed=[delivery.id])
            return "parked"
        history: list[Message] = list(expired)
        if turn.wait_call is not None:
            history.insert(
                0, ToolMessage(tool_call_id=turn.wait_call.id, name=turn.wait_call.name, content="Cancelled.")
            )
        await session.end_turn_cancelled(history=history, cancel=delivery if delivery.kind == "cancel" else None)
        return "ended"
    return "deferred"


async def absorb_results(session: TaskSession, deliveries: list[DeliveryRecord]) -> None:
    """Task reports (and answers to relayed requests) that reached a running turn, at a step boundary."""
    for delivery in deliveries:
        if delivery.kind == "responses":
            await forward_answers(session, delivery)
            continue
        message = settle_task(session, delivery.payload)
        session.checkpoint_later(history=[message] if message is not None else [], consumed=[delivery.id])
    deliveries.clear()


def note_tasks(session: TaskSession) -> None:
    """Give the model a fresh `[Tasks]` note when the tasks changed since the last one."""
    note = tasks_note(session.state)
    if note is not None and note != session.state.tasks_note:
        session.state.tasks_note = note
        session.checkpoint_later(history=[UserMessage(content=note)])


async def park_on_tasks(session: TaskSession, history: list[Message], *, wait: ToolCall | None = None) -> None:
    """Hold the turn until a task settles (`turn.waiting` with `on: "tasks"`); saved with the step's messages."""
    turn = session.turn
    turn.waiting_on_tasks = True
    if wait is not None:
        turn.wait_call = CallRecord(id=wait.id, name=wait.name, arguments=wait.arguments)
        seconds = wait.arguments.get("timeoutSeconds")
        if isinstance(seconds, int) and seconds >= 1:
            turn.wait_deadline = session.host.now() + seconds
    asking = any(t.relayed for t in session.state.tasks.values())  # a child asks a person
    session.emit(TurnWaiting(TurnAt.of(turn), "input" if asking else "tasks", session.state.usage))
    await session.commit(history=history)


async def recover_tasks(session: TaskSession, events: list[dict[str, Any]]) -> None:
    """Tasks started, given work or settled by events after the checkpoint.

    The work those events started is handed to the children again (creating a child that does
    not exist yet): both are idempotent, so a child that already has it is left alone.
    """
    state = session.state
    nodes: dict[str, str] = {}
    messages: dict[str, str] = {}
    calls: dict[str, ToolCall] = {}
    started: dict[str, bool] = {}
    """Tasks whose work began in these events: whether the child is new."""
    for event in events:
        data = event.get("data", {})
        kind = event.get("type")
        if kind == "actions.requested":
            for action in data.get("actions", []):
                if "nodeId" in action:
                    nodes[action["callId"]] = action["nodeId"]
                    messages[action["callId"]] = str(action.get("input", {}).get("message", ""))
                else:
                    name = action.get("toolName", "")
                    calls[action["callId"]] = ToolCall(
                        id=action["callId"], name=name, arguments=action.get("input", {})
                    )
        elif kind == "task.started" and data.get("kind") == "tool" and data.get("taskId") not in state.tasks:
            state.tasks[data["taskId"]] = TaskState(
                task_id=data["taskId"],
                name=data["name"],
                kind="tool",
                node_id=session.agent.manifest.node_id,
                child_session_id=new_session_id(),  # replaced by the one created for this call, if any
                call_id=data["callId"],
                turn_id=data["turnId"],
            )
            started[data["taskId"]] = True
        elif kind == "agent.started" and data.get("taskId") not in state.tasks:
            started[data["taskId"]] = True
            node_id = nodes.get(data["callId"], AGENT_TOOL)
            timeout = session.host.delegation_timeout(node_id)
            state.tasks[data["taskId"]] = TaskState(
                task_id=data["taskId"],
                name=data["name"],
                node_id=node_id,
                child_session_id=data["sessionId"],
                call_id=data["callId"],
                turn_id=data["turnId"],
                deadline=session.host.now() + timeout if timeout is not None else None,
            )
        elif kind == "task.started" and data.get("taskId") in state.tasks:
            task = state.tasks[data["taskId"]]
            task.status, task.call_id, task.turn_id = "working", data["callId"], data["turnId"]
            started.setdefault(task.task_id, False)
        elif kind == "task.settled" and data.get("taskId") in state.tasks:
            state.tasks[data["taskId"]].status = "idle"
    for task_id, new_child in started.items():
        work = state.tasks.get(task_id)
        if work is None or work.status != "working":
            continue
        if work.kind == "tool" and work.call_id in calls:
            await give_work(session, work, "", new_child=new_child, tool_call=calls[work.call_id])
        elif work.call_id in messages:
            await give_work(session, work, messages[work.call_id], new_child=new_child)
