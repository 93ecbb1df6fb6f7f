"""The events of tool calls and of the people asked about them: requested, streamed, answered, settled.

Each class is one event type; its fields are the event's data and `wire()` its `data` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from eve_runtime.events.catalog import CallAt, EventType, StepAt, StreamEvent, TaskAt
from eve_runtime.messages import ToolCall
from eve_runtime.outcomes import ToolOutcome

__all__ = [
    "ActionInputAppended",
    "ActionPartial",
    "ActionResult",
    "ActionsRequested",
    "ApprovalSettled",
    "InputRequested",
    "InputResolved",
    "load_skill_action",
    "requested_skill",
    "subagent_call_action",
    "tool_call_action",
]


def tool_call_action(call: ToolCall) -> dict[str, Any]:
    """A call's entry in `actions.requested`."""
    return {"callId": call.id, "input": call.arguments, "kind": "tool-call", "toolName": call.name}


def requested_skill(call: ToolCall) -> str | None:
    """The skill a `load_skill` call names (its `skill` input), if it names one."""
    value = call.arguments.get("skill") if call.invalid_arguments is None else None
    return value if isinstance(value, str) and value else None


def load_skill_action(call: ToolCall) -> dict[str, Any]:
    """A `load_skill` call's entry in `actions.requested`, with the skill's `name` when the input names one."""
    entry: dict[str, Any] = {"callId": call.id, "input": call.arguments, "kind": "load-skill"}
    name = requested_skill(call)
    if name is not None:
        entry["name"] = name
    return entry


def subagent_call_action(call: ToolCall, node_id: str, description: str) -> dict[str, Any]:
    """A delegation call's entry in `actions.requested` (it starts a task in a child session)."""
    return {
        "callId": call.id,
        "description": description,
        "input": call.arguments,
        "kind": "subagent-call",
        "name": call.name,
        "nodeId": node_id,
        "subagentName": call.name,
    }


@dataclass(frozen=True, slots=True)
class ActionInputAppended(StreamEvent):
    """A piece of a tool call's input, as the model streams it."""

    type: ClassVar[EventType] = "action.input.appended"
    at: StepAt
    call_id: str
    delta: str
    tool_name: str

    def wire(self) -> dict[str, Any]:
        return {"callId": self.call_id, "inputTextDelta": self.delta, **self.at.wire(), "toolName": self.tool_name}


@dataclass(frozen=True, slots=True)
class ActionsRequested(StreamEvent):
    """A call's start record: durable before the call runs (`tool_call_action`, `subagent_call_action`)."""

    type: ClassVar[EventType] = "actions.requested"
    at: StepAt
    actions: list[dict[str, Any]]
    presentation: dict[str, Any] | None = None
    """How a client may title the calls, by call id."""

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"actions": self.actions}
        if self.presentation is not None:
            data["presentation"] = self.presentation
        return {**data, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class ActionPartial(StreamEvent):
    """Something a running call reports before its result: a generator's value, a workflow journal entry."""

    type: ClassVar[EventType] = "action.partial"
    at: CallAt
    tool_name: str
    output: Any

    def wire(self) -> dict[str, Any]:
        result = {"callId": self.at.call_id, "kind": "tool-result", "output": self.output, "toolName": self.tool_name}
        return {"result": result, **self.at.step.wire()}


@dataclass(frozen=True, slots=True)
class ActionResult(StreamEvent):
    """How a call ended (a cancelled call shows as `failed`); a skill load's is a `load-skill-result`."""

    type: ClassVar[EventType] = "action.result"
    at: StepAt
    outcome: ToolOutcome
    load_skill: bool = False
    """The call loaded a skill (the framework's `load_skill`): the result names the skill, not the tool."""

    def wire(self) -> dict[str, Any]:
        outcome = self.outcome
        result: dict[str, Any] = {"callId": outcome.call.id}
        if self.load_skill:
            result["kind"] = "load-skill-result"
            name = requested_skill(outcome.call)
            if name is not None:
                result["name"] = name
            result["output"] = outcome.output
        else:
            result.update(kind="tool-result", output=outcome.output, toolName=outcome.call.name)
        if outcome.error_name is not None:
            result["errorName"] = outcome.error_name
        if outcome.is_error:
            result["isError"] = True
        status = "failed" if outcome.status == "cancelled" else outcome.status
        data: dict[str, Any] = {"result": result, "status": status}
        if outcome.error is not None:
            data["error"] = outcome.error
        return {**data, **self.at.wire()}


@dataclass(frozen=True, slots=True)
class ApprovalSettled(StreamEvent):
    """One answer to a request of a parked turn (`approved`, or `cancelled` for any other option)."""

    type: ClassVar[EventType] = "approval.settled"
    at: StepAt
    request_id: str
    approved: bool
    responder: str
    """The principal who answered."""

    def wire(self) -> dict[str, Any]:
        return {
            "outcome": "approved" if self.approved else "cancelled",
            "requestId": self.request_id,
            "responderPrincipalId": self.responder,
            **self.at.wire(),
        }


@dataclass(frozen=True, slots=True)
class InputRequested(StreamEvent):
    """Requests for a person: approvals and budgets of a step, a tool's question, or a child's relayed ones."""

    type: ClassVar[EventType] = "input.requested"
    at: StepAt | CallAt | TaskAt
    requests: list[dict[str, Any]]

    def wire(self) -> dict[str, Any]:
        at = self.at
        if isinstance(at, CallAt):
            return {"callId": at.call_id, "requests": self.requests, **at.step.wire()}
        return {"requests": self.requests, **at.wire()}


@dataclass(frozen=True, slots=True)
class InputResolved(StreamEvent):
    """How requests were resolved (answered, approved, denied, ignored, cancelled, ...)."""

    type: ClassVar[EventType] = "input.resolved"
    at: StepAt | CallAt | TaskAt
    resolutions: list[dict[str, Any]]
    withdrawn: bool = False
    """A task stopped: its relayed requests are withdrawn (`cancelled`) on this stream."""

    def wire(self) -> dict[str, Any]:
        at = self.at
        if isinstance(at, CallAt):
            return {"resolutions": self.resolutions, "callId": at.call_id, **at.step.wire()}
        if isinstance(at, TaskAt) and self.withdrawn:
            data = at.wire()
            return {"callId": data.pop("callId"), "resolutions": self.resolutions, **data}
        return {"resolutions": self.resolutions, **at.wire()}
