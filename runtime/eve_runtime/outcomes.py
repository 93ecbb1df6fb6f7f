"""How a tool call ended: what the stream shows (`action.result`) and what the model reads.

Every call ends in a [`ToolOutcome`][eve_runtime.outcomes.ToolOutcome], whether it ran
(`eve_runtime.engine.tool_runner`), was refused by a person, cancelled, or answered by a task's
receipt. `eve_runtime.events.actions.ActionResult` puts one on the stream.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from eve_runtime.messages import ToolCall
from eve_runtime.redaction import REDACTOR

__all__ = [
    "ABANDONED_CODE",
    "ABANDONED_TEXT",
    "OutcomeStatus",
    "ToolOutcome",
    "abandoned_outcome",
    "cancelled_outcome",
    "failed_outcome",
    "redacted_outcome",
    "refused_outcome",
]

OutcomeStatus = Literal["completed", "failed", "rejected", "cancelled"]


@dataclass(frozen=True)
class ToolOutcome:
    """How a call ended: what the stream shows and what the model reads."""

    call: ToolCall
    status: OutcomeStatus
    output: Any
    """The JSON result (or, for a failure, its message)."""
    model_content: str
    """What the model receives as the tool's result."""
    error: dict[str, Any] | None = None
    is_error: bool = False
    error_name: str | None = None


def redacted_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """The outcome with the process's secrets masked (`eve_runtime.redaction`): what the model and the stream get."""
    if not REDACTOR.secrets():
        return outcome
    return replace(
        outcome,
        output=REDACTOR.value(outcome.output),
        model_content=REDACTOR.text(outcome.model_content),
        error=REDACTOR.value(outcome.error),
        error_name=REDACTOR.text(outcome.error_name) if outcome.error_name is not None else None,
    )


def failed_outcome(call: ToolCall, code: str, message: str, *, name: str | None = None) -> ToolOutcome:
    """A call that failed: `code` and `message` reach the model and the stream (`name`: the exception's)."""
    label = name or "Error"
    return ToolOutcome(
        call=call,
        status="failed",
        output=message,
        model_content=f"{label}: {message}",
        error={"code": code, "message": message, **({"name": name} if name else {})},
        is_error=True,
        error_name=name,
    )


DENIED_MESSAGE = "Tool execution was denied."
IGNORED_MESSAGE = "Ignored because the user continued without responding."
INVALID_MESSAGE = "Invalid approval response."


def refused_outcome(
    call: ToolCall,
    *,
    request_id: str | None,
    status: Literal["denied", "ignored", "invalid"],
    reason: str | None = None,
) -> ToolOutcome:
    """A call that never ran: its approval was denied, invalid (no valid option), or ignored (the person went on).

    The code is `TOOL_EXECUTION_DENIED` in every case, as eve reports it (a withdrawn approval
    included); `result.output.approval.status` and the message tell the cases apart.
    """
    code = "TOOL_EXECUTION_DENIED"
    message = {"denied": reason or DENIED_MESSAGE, "ignored": IGNORED_MESSAGE, "invalid": INVALID_MESSAGE}[status]
    output: dict[str, Any] = {"code": code, "message": message, "tool": {"result": "not_run"}}
    if request_id is not None:
        output["approval"] = {"requestId": request_id, "status": status}
    return ToolOutcome(
        call=call,
        status="rejected",
        output=output,
        model_content=message,
        error={"code": code, "message": message},
        is_error=True,
    )


def cancelled_outcome(call: ToolCall) -> ToolOutcome:
    """The outcome of a call stopped by a cancel (it stays in history, answered as cancelled)."""
    message = "The call was cancelled before it finished."
    return ToolOutcome(
        call=call,
        status="cancelled",
        output=message,
        model_content=f"Cancelled: {message}",
        error={"code": "CANCELLED", "message": message},
        is_error=True,
    )


ABANDONED_CODE = "ACTION_ABANDONED"
"""The error code of a call closed by recovery: its start was durable, its result never was."""

ABANDONED_TEXT = (
    "This call was interrupted before its result was recorded, and it was not run again. It may or "
    "may not have taken effect: check before calling the tool again if it is still needed."
)
"""What the model (and the stream) is told of such a call."""


def abandoned_outcome(call: ToolCall) -> ToolOutcome:
    """The outcome of a call an interrupted attempt left open: never run again, closed as abandoned.

    On the v26 wire it is a `failed` result whose `error.code` is `ACTION_ABANDONED` (the stream's
    `status` has no other value for it); clients show it as ended.
    """
    return ToolOutcome(
        call=call,
        status="failed",
        output=ABANDONED_TEXT,
        model_content=ABANDONED_TEXT,
        error={"code": ABANDONED_CODE, "message": ABANDONED_TEXT},
        is_error=True,
    )
