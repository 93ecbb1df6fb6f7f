"""Recovering a turn from what an interrupted attempt left in the event log.

A checkpoint records how many events were durable when it was written. Events after that count
were written by an attempt that never reached its checkpoint (a crash, a kill). From them the
turn's history is rebuilt without running anything again:

- a completed step (its `step.completed` is there) contributes its reply text, tool calls and
  results, exactly as it would have been checkpointed;
- the interrupted step contributes its tool calls whose start (`actions.requested`) is durable,
  each answered with its recorded result when `action.result` made it to the log, or as
  *abandoned* otherwise: such a call is never run again, the model is told so, and the stream
  gets the call's one closing `action.result` (`failed`, `error.code: "ACTION_ABANDONED"`), so
  no call is left showing as running;
- except a workflow tool's call (`@tool(workflow=True)`) without a result: it is *resumed*, its
  body run again with the journal its events hold (see `eve_runtime.engine.workflow`), first thing in
  the next step;
- and a skill load (a `load-skill` action) without a result, which has no effect to fear: it is
  answered again from the agent's skills (and its `load-skill-result` written then);
- and a call of a completed step waiting for its approval (its `input.requested` durable, the
  park's checkpoint not): nothing ran it, and someone may already be answering the request, so the
  turn parks on it again, exactly as the lost checkpoint would have (`turn.waiting` is written
  if it was lost too);
- text the interrupted step streamed is dropped (streamed deltas stay on the stream).

The turn then re-runs the interrupted step, with the same `turnId`, `stepIndex` and `sequence`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.checkpoint import Awaiting, CallRecord, PendingRequest
from eve_runtime.engine.ports import Session
from eve_runtime.engine.skills import LOAD_SKILL, skill_outcome
from eve_runtime.engine.workflow import journal_from_events
from eve_runtime.events.actions import ActionResult
from eve_runtime.events.catalog import StepAt, TurnAt
from eve_runtime.events.turns import TurnWaiting
from eve_runtime.events.usage import add_call, call_usage_of
from eve_runtime.messages import AssistantMessage, Message, ToolCall, ToolMessage
from eve_runtime.models.base import Usage
from eve_runtime.outcomes import ABANDONED_CODE, ABANDONED_TEXT, ToolOutcome, abandoned_outcome
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.tasks.delegation import working_tasks
from eve_runtime.tasks.flow import recover_tasks
from eve_runtime.tasks.relay import relay_to_parent

logger = logging.getLogger("eve.actor")

__all__ = ["ABANDONED_TEXT", "RecoveredSteps", "recover_executed", "recover_steps", "recover_turn"]


@dataclass
class _Step:
    index: int
    completed: bool = False
    text: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    at: dict[str, StepAt] = field(default_factory=dict)
    """Where each call was requested (its closing event goes there)."""
    skill_loads: set[str] = field(default_factory=set)
    """The calls that were `load-skill` actions."""
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    asked: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The approval request (`input.requested` entry) of each call that asked for one."""
    usage: Usage | None = None
    cost_usd: float | None = None
    finish_reason: str | None = None


@dataclass
class RecoveredSteps:
    """What the events after a checkpoint add to a turn."""

    history: list[Message]
    next_step: int
    """The step index to run next (the interrupted step's own index when one was interrupted)."""
    interrupted: bool
    """Whether a step was cut short (it counts towards STEP_INTERRUPTED)."""
    usage: list[tuple[Usage, float | None]]
    """The usage of the steps that completed after the checkpoint."""
    replied: bool = False
    """The last step completed with the turn's final reply: the turn only needs closing."""
    resume: list[CallRecord] = field(default_factory=list)
    """Workflow calls of the interrupted step to run again with their journals."""
    closings: list[ActionResult] = field(default_factory=list)
    """The closing `action.result` of each call that had none: abandoned calls and re-answered skill loads."""
    awaiting: Awaiting | None = None
    """The approvals the last step asked for and nobody answered: the turn parks on them again."""
    waiting_written: bool = False
    """Whether the turn's `turn.waiting` is among the events (else the re-park writes it)."""


def _result_content(agent: RuntimeAgent, name: str, data: dict[str, Any]) -> tuple[str, bool]:
    result = data.get("result", {})
    output = result.get("output")
    status = data.get("status")
    if status == "rejected":
        return "Tool execution was denied.", True
    if (data.get("error") or {}).get("code") == ABANDONED_CODE:  # closed by an earlier recovery
        return ABANDONED_TEXT, True
    if result.get("isError") or status == "failed":
        label = result.get("errorName") or "Error"
        message = output if isinstance(output, str) else json.dumps(output, separators=(",", ":"))
        return f"{label}: {message}", True
    tool = agent.tools.get(name)
    projection = tool.options.to_model_output if tool is not None else None
    value = projection(output) if projection is not None else output
    return (value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))), False


def recover_steps(agent: RuntimeAgent, turn_id: str, events: list[dict[str, Any]], next_step: int) -> RecoveredSteps:
    """Rebuild the steps of turn `turn_id` from events written after its checkpoint."""
    steps: dict[int, _Step] = {}
    resolved: set[str] = set()
    waiting_written = False
    for event in events:
        data = event.get("data", {})
        kind = event.get("type")
        if kind == "input.resolved":
            resolved.update(str(r.get("requestId")) for r in data.get("resolutions", []))
        if data.get("turnId") != turn_id:
            continue
        if kind == "turn.waiting":
            waiting_written = True
        if "stepIndex" not in data:
            continue
        step = steps.get(data["stepIndex"])
        if step is None:
            step = steps[data["stepIndex"]] = _Step(data["stepIndex"])
        if kind == "message.completed":
            step.text = data.get("message")
        elif kind == "actions.requested":
            for action in data.get("actions", []):
                loads = action.get("kind") == "load-skill"  # its `name` is the skill's, not the tool's
                name = LOAD_SKILL if loads else action.get("toolName") or action.get("name", "")
                step.calls.append(ToolCall(id=action["callId"], name=name, arguments=action.get("input", {})))
                step.at[action["callId"]] = StepAt(data.get("sequence", 0), data["stepIndex"], turn_id)
                if loads:
                    step.skill_loads.add(action["callId"])
        elif kind == "action.result":
            step.results[data["result"]["callId"]] = data
        elif kind == "input.requested" and "callId" not in data:  # a workflow tool's own asks name their call
            for request in data.get("requests", []):
                if request.get("kind") == "tool-approval":
                    step.asked[request["action"]["callId"]] = request
        elif kind == "step.completed":
            step.completed = True
            step.finish_reason = data.get("finishReason")
            if "usage" in data:
                step.usage, step.cost_usd = call_usage_of(data["usage"])
    history: list[Message] = []
    usage: list[tuple[Usage, float | None]] = []
    resume: list[CallRecord] = []
    closings: list[ActionResult] = []
    parked: list[PendingRequest] = []
    interrupted = False
    last_index = max(steps, default=-1)
    for index in sorted(steps):
        step = steps[index]
        next_step = index + 1 if step.completed else index
        interrupted = interrupted or not step.completed
        if step.usage is not None:
            usage.append((step.usage, step.cost_usd))
        if not step.calls:
            if step.completed and step.text:
                history.append(AssistantMessage(content=step.text))
            continue
        history.append(
            AssistantMessage(content=(step.text or "") if step.completed else "", tool_calls=tuple(step.calls))
        )
        for call in step.calls:
            recorded = step.results.get(call.id)
            request = step.asked.get(call.id)
            asked = recorded is None and request is not None and step.completed and index == last_index
            if asked and request is not None and request["requestId"] not in resolved:  # never answered: it waits
                record = CallRecord(id=call.id, name=call.name, arguments=call.arguments)
                parked.append(
                    PendingRequest(request_id=request["requestId"], kind="tool-approval", request=request, call=record)
                )
                continue
            if recorded is None and _is_workflow(agent, call.name):
                journal = journal_from_events(call.id, events)
                resume.append(CallRecord(id=call.id, name=call.name, arguments=call.arguments, journal=journal))
                next_step = index + 1  # the step's model call is done: the next one starts with the resumed calls
                continue
            if recorded is None:
                loads = call.id in step.skill_loads
                outcome = skill_outcome(agent, call) if loads else abandoned_outcome(call)
                closings.append(ActionResult(step.at[call.id], outcome, load_skill=loads))
                content, is_error = outcome.model_content, outcome.is_error
            else:
                content, is_error = _result_content(agent, call.name, recorded)
            history.append(ToolMessage(tool_call_id=call.id, name=call.name, content=content, is_error=is_error))
    last = steps[last_index] if steps else None
    replied = (
        last is not None
        and last.completed
        and not last.calls
        and last.finish_reason not in (None, "tool-calls", "other")
    )
    return RecoveredSteps(
        history=history,
        next_step=next_step,
        interrupted=interrupted,
        usage=usage,
        replied=replied,
        resume=resume,
        closings=closings,
        awaiting=Awaiting(step_index=last_index, requests=parked) if parked else None,
        waiting_written=waiting_written,
    )


def _is_workflow(agent: RuntimeAgent, name: str) -> bool:
    tool = agent.tools.get(name)
    return tool is not None and tool.options.workflow


def recover_executed(
    agent: RuntimeAgent, calls: list[CallRecord], events: list[dict[str, Any]], at: StepAt
) -> tuple[list[Message], list[CallRecord], list[ActionResult]]:
    """Calls that may have run at the start of a step before a crash (approved or resumed ones).

    Returns their recorded results (or abandoned), the workflow calls to resume again with
    their journals extended by what these events add, and the closing events of the abandoned
    ones (at `at`, the step that ran them).
    """
    results = {e["data"]["result"]["callId"]: e["data"] for e in events if e.get("type") == "action.result"}
    messages: list[Message] = []
    resume: list[CallRecord] = []
    closings: list[ActionResult] = []
    for call in calls:
        recorded = results.get(call.id)
        if recorded is None and _is_workflow(agent, call.name):
            journal = [*(call.journal or []), *journal_from_events(call.id, events)]
            resume.append(call.model_copy(update={"journal": journal}))
        elif recorded is None:
            outcome: ToolOutcome = abandoned_outcome(ToolCall(id=call.id, name=call.name, arguments=call.arguments))
            closings.append(ActionResult(at, outcome))
            messages.append(ToolMessage(tool_call_id=call.id, name=call.name, content=ABANDONED_TEXT, is_error=True))
        else:
            content, is_error = _result_content(agent, call.name, recorded)
            messages.append(ToolMessage(tool_call_id=call.id, name=call.name, content=content, is_error=is_error))
    return messages, resume, closings


async def recover_turn(session: Session) -> None:
    """Rebuild the open turn from the events an interrupted attempt left after the checkpoint."""
    turn = session.state.turn
    if turn is None:
        return
    events = await session.events_after_checkpoint()
    executed: list[Message] = []
    resumed: list[CallRecord] = []
    closings: list[ActionResult] = []
    if turn.execute and turn.execute_started:
        # Approved calls that may have started: never run again (recorded results kept),
        # except workflow tools, which resume from their journals.
        executed, resumed, closings = recover_executed(session.agent, turn.execute, events, StepAt.of(turn))
        turn.execute = resumed
        turn.execute_started = False
    if not events and not executed and not resumed:
        return
    await recover_tasks(session, events)
    recovered = recover_steps(session.agent, turn.turn_id, events, turn.step_index)
    recovered.history[0:0] = executed
    for closing in [*closings, *recovered.closings]:  # before anything that may end the turn
        session.emit(closing)
    turn.execute.extend(recovered.resume)
    for usage, cost in recovered.usage:
        add_call(session.state.usage, usage, cost)
    turn.step_index = recovered.next_step
    if recovered.awaiting is not None:  # the park's checkpoint was lost: park again (see the module docstring)
        turn.awaiting = recovered.awaiting
        relay_to_parent(session, "requested", {"requests": [r.request for r in recovered.awaiting.requests]})
        if not recovered.waiting_written:
            session.emit(TurnWaiting(TurnAt.of(turn), "input", session.state.usage))
    # a workflow tool resumed from its journal lost nothing: that alone is no interruption
    if (recovered.interrupted and not recovered.resume) or executed:
        turn.interruptions += 1
        logger.warning("session %s: turn %s resumed after an interruption", session.session_id, turn.turn_id)
    if recovered.replied and not working_tasks(session.state):
        # The final reply was durable; only the turn's end was lost with the crash.
        await session.end_turn_completed(history=recovered.history)
        return
    if recovered.replied:  # ... but its tasks still work: the turn waits for them
        turn.waiting_on_tasks = True
    if turn.interruptions > session.host.options.max_interruptions:
        await session.end_turn_failed(
            "STEP_INTERRUPTED",
            f"The turn was interrupted {turn.interruptions} times (more than "
            f"{session.host.options.max_interruptions}); it was stopped.",
            None,
            history=recovered.history,
        )
        return
    await session.commit(history=recovered.history)
