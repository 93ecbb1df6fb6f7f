"""How a tool call ended: what the stream shows (`action.result`) and what the model reads.

Every call ends in a [`ToolOutcome`][eve_runtime.outcomes.ToolOutcome], whether it ran
(`eve_runtime.engine.tool_runner`), was refused by a person, cancelled, or answered by a task's
receipt. `eve_runtime.events.actions.ActionResult` puts one on the stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from eve_runtime.messages import ToolCall

__all__ = ["OutcomeStatus", "ToolOutcome", "cancelled_outcome", "failed_outcome", "refused_outcome"]

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
    """A call that never ran: its approval was denied, invalid (no valid option), or ignored (the person went on)."""
    code = "TOOL_EXECUTION_IGNORED" if status == "ignored" else "TOOL_EXECUTION_DENIED"
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
