"""The names of the stream events eve emits (stream version 26)."""

from __future__ import annotations

__all__ = ["EVENT_TYPES", "STREAM_VERSION"]

STREAM_VERSION = 26
"""The `x-eve-stream-version` this runtime speaks."""

EVENT_TYPES: tuple[str, ...] = (
    "session.started",
    "turn.started",
    "message.received",
    "step.started",
    "reasoning.appended",
    "reasoning.completed",
    "message.appended",
    "message.completed",
    "action.input.appended",
    "actions.requested",
    "action.partial",
    "action.result",
    "approval.candidate",
    "approval.settled",
    "input.requested",
    "input.resolved",
    "authorization.required",
    "authorization.completed",
    "task.started",
    "task.settled",
    "agent.started",
    "result.completed",
    "compaction.requested",
    "compaction.completed",
    "context.cleared",
    "step.completed",
    "step.failed",
    "turn.waiting",
    "turn.completed",
    "turn.failed",
    "turn.cancelled",
    "session.waiting",
    "session.failed",
    "session.completed",
)
"""Every event type of the v26 catalogue, in the order the reference lists them."""
