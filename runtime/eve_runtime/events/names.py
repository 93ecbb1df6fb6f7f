"""The names of the stream's event types, apart from the events themselves (`events.catalog`).

Defining a hook or a channel checks the event names it handles against these, and compiling an
app (`eve info`) needs nothing else of the events.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["EVENT_TYPES", "EXTENSION_EVENT_TYPES", "EveEventType", "EventType", "ExtensionEventType"]

EveEventType = Literal[
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
]
"""Every event type of the v26 catalogue, in the order the reference lists them.

This runtime does not emit `approval.candidate`; clients and hooks may still name it.
`authorization.*` comes from connections needing a sign-in (`events/authorization.py`).
"""

EVENT_TYPES: tuple[EveEventType, ...] = get_args(EveEventType)

ExtensionEventType = Literal["step.retrying"]
"""Events this runtime adds to eve's catalogue (clients skip types they do not know, as eve's reducer does).

`step.retrying`: a step's model call failed in a way a retry may cure (or the step itself raised),
and it runs again after `delayMs`; see `events.extensions.StepRetrying`.
"""

EXTENSION_EVENT_TYPES: tuple[ExtensionEventType, ...] = get_args(ExtensionEventType)

EventType = Literal[EveEventType, ExtensionEventType]
"""Every type a session may emit: eve's catalogue and this runtime's extensions."""
