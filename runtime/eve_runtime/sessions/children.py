"""The child sessions of tasks: creating one for a new task, and giving it the task's later calls.

A delegated task (a subagent's, or a tool task's) runs in a child session created once per call
(create-once by the call's id), on its parent's build, with the link to its parent in its first
message; a tool task's child gets the tool call to run instead of a message for a model. A task
called again gives its child another message, or a served tool's session the call's input, once
per call (the call's id is the idempotency key).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Protocol

from eve_runtime.checkpoint import TaskState
from eve_runtime.engine.held import CodePins
from eve_runtime.engine.hook_dispatch import HookDispatcher
from eve_runtime.ids import new_delivery_id
from eve_runtime.messages import ToolCall
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import DeliveryKind, DeliveryRecord, NewDelivery, SessionNotActive, SessionRecord, Store
from eve_runtime.tasks.delegation import CHILD_PREFIX

__all__ = ["ChildHost", "create_child", "send_to_child", "serve_input"]


class ChildHost(Protocol):
    """Creating the child sessions of tasks and giving them their later calls."""

    @property
    def store(self) -> Store: ...

    @property
    def agent(self) -> RuntimeAgent:
        """The root agent of the newest build."""
        ...

    @property
    def hooks(self) -> HookDispatcher: ...

    def build_of(self, session_id: str) -> RuntimeAgent:
        """The root agent of the build a session runs here (the newest when no actor runs it)."""
        ...

    def new_record(self, *, operation_id: str | None = None, agent: RuntimeAgent | None = None) -> SessionRecord: ...

    def agent_for_node(self, node_id: str, root: RuntimeAgent | None = None) -> RuntimeAgent: ...

    @property
    def pins(self) -> CodePins: ...

    def look_after(self, session: SessionRecord) -> None: ...

    async def deliver(
        self, session_id: str, kind: DeliveryKind, payload: dict[str, Any], *, idempotency_key: str | None = None
    ) -> DeliveryRecord: ...


async def create_child(
    runtime: ChildHost,
    parent_id: str,
    task: TaskState,
    message: str,
    *,
    tool_call: ToolCall | None = None,
    traceparent: str | None = None,
) -> str:
    """Create the child session of a new task, with its first message (once: again is a no-op).

    A tool task's child gets `tool_call` to run instead of a message for a model. Returns the
    child's id: the task's, or the one an earlier attempt created for the same call. With
    `traceparent` (the parent turn's), the child's session joins the parent's trace.
    """
    link = {
        "sessionId": parent_id,
        "taskId": task.task_id,
        "name": task.name,
        "callId": task.call_id,
        "turnId": task.turn_id,
    }
    root = runtime.build_of(parent_id)  # the child runs its parent's build
    record = dataclasses.replace(
        runtime.new_record(
            operation_id=f"task:{parent_id}:{task.call_id}", agent=runtime.agent_for_node(task.node_id, root)
        ),
        id=task.child_session_id,
        agent=CHILD_PREFIX + task.node_id,
    )
    payload: dict[str, Any] = {
        "message": message,
        "parent": link,
        "taskCall": task.call_id,
        "turnPolicy": "queue",
        **_caller(task),
    }
    if tool_call is not None:
        payload["message"] = f"{tool_call.name} {json.dumps(tool_call.arguments, separators=(',', ':'))}"
        payload["toolCall"] = {"id": tool_call.id, "name": tool_call.name, "arguments": tool_call.arguments}
    if traceparent is not None:
        payload["traceparent"] = traceparent
    first = NewDelivery(id=new_delivery_id(), kind="message", payload=payload)
    session, created = await runtime.store.create_session(record, first)
    if created:
        runtime.hooks.session_created(session.id)
        runtime.pins.keep(session.id, root)
        runtime.look_after(session)
    return session.id


async def send_to_child(runtime: ChildHost, task: TaskState, message: str) -> bool:
    """Give a task's child another message for the task's current call (once); False when it has ended."""
    payload = {"message": message, "turnPolicy": "queue", "taskCall": task.call_id, **_caller(task)}
    return await _deliver_call(runtime, task, payload)


async def serve_input(runtime: ChildHost, task: TaskState, arguments: dict[str, Any]) -> bool:
    """Give a served tool's session the input of the task's current call (once); False when it has ended."""
    payload = {
        "message": f"{task.name} {json.dumps(arguments, separators=(',', ':'))}",
        "serveInput": {"callId": task.call_id, "arguments": arguments},
        **_caller(task),
    }
    return await _deliver_call(runtime, task, payload)


def _caller(task: TaskState) -> dict[str, Any]:
    """The `auth` of a task's delivery: the person whose turn gave the work, so the child's turn runs as them.

    Nothing when that turn had no recorded principal: the child then runs as the server's own.
    """
    if task.principal_id is None:
        return {}
    return {"auth": {"authenticator": "task", "principalId": task.principal_id}}


async def _deliver_call(runtime: ChildHost, task: TaskState, payload: dict[str, Any]) -> bool:
    try:
        await runtime.deliver(task.child_session_id, "message", payload, idempotency_key=f"task-call:{task.call_id}")
    except SessionNotActive:
        return False
    return True
