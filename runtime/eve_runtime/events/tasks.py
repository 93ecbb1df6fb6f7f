"""The events of tasks: a subagent or a tool task started in a child session, and settled.

Each class is one event type; its fields are the event's data and `wire()` its `data` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from eve_runtime.checkpoint import TaskState
from eve_runtime.events.catalog import EventType, StreamEvent

__all__ = ["AgentStarted", "TaskSettled", "TaskStarted"]


@dataclass(frozen=True, slots=True)
class TaskStarted(StreamEvent):
    """A task got work: the call in its current `call_id`, from the turn in its `turn_id`."""

    type: ClassVar[EventType] = "task.started"
    task: TaskState

    def wire(self) -> dict[str, Any]:
        task = self.task
        return {
            "callId": task.call_id,
            "kind": task.kind,
            "name": task.name,
            "taskId": task.task_id,
            "turnId": task.turn_id,
        }


@dataclass(frozen=True, slots=True)
class AgentStarted(StreamEvent):
    """A subagent's task has a new child session, streamed at `streamPath`."""

    type: ClassVar[EventType] = "agent.started"
    task: TaskState

    def wire(self) -> dict[str, Any]:
        task = self.task
        return {
            "callId": task.call_id,
            "turnId": task.turn_id,
            "name": task.name,
            "sessionId": task.child_session_id,
            "streamPath": f"/eve/v1/session/{task.child_session_id}/stream",
            "taskId": task.task_id,
        }


@dataclass(frozen=True, slots=True)
class TaskSettled(StreamEvent):
    """A task's current work ended: `completed` with its `output`, or with an `error`, or cancelled."""

    type: ClassVar[EventType] = "task.settled"
    task: TaskState
    status: str
    output: Any = None
    error: dict[str, Any] | None = None
    cancel_reason: str | None = None
    """Set when this runtime stopped the task (`status` is then `cancelled`)."""

    def wire(self) -> dict[str, Any]:
        task = self.task
        data: dict[str, Any] = {"callId": task.call_id}
        if self.cancel_reason is not None:
            data["cancel"] = {"reason": self.cancel_reason}
        data.update(kind=task.kind, name=task.name, status=self.status, taskId=task.task_id, turnId=task.turn_id)
        if self.status == "completed" and self.cancel_reason is None:
            data["output"] = self.output
        elif self.cancel_reason is None:
            data["error"] = self.error
        return data
