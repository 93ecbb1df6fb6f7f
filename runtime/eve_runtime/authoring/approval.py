"""Tool approval: deciding per call whether a person must approve it, and the requests they answer.

A tool's `@tool(needs_approval=...)` is `True` (always ask), `False` (never), or a policy: a
function called with an [`ApprovalCheck`][eve_runtime.engine.approval.ApprovalCheck] for every call,
returning `True`/`"user-approval"` (ask), `False`/`"not-applicable"` (run), `"approved"` (run
without asking), `"denied"` (refuse without asking), or an
[`ApprovalDecision`][eve_runtime.engine.approval.ApprovalDecision] with a reason. `always()`, `never()`
and `once()` (ask the first time a session calls the tool, then allow) are ready-made policies.
"""

from __future__ import annotations

import inspect
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "APPROVE",
    "NEGATIVE_OPTIONS",
    "ApprovalCheck",
    "ApprovalDecision",
    "Decision",
    "always",
    "approval_request",
    "decide",
    "humanize",
    "match_option",
    "never",
    "new_request_id",
    "once",
]

Decision = Literal["user-approval", "not-applicable", "approved", "denied"]
APPROVE = "approve"
NEGATIVE_OPTIONS = ("cancel", "deny")
"""eve's current negative option is `cancel`; older clients answer `deny`. Both refuse."""
OPTIONS = ({"id": APPROVE, "label": "Approve"}, {"id": "cancel", "label": "Cancel"})
_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class ApprovalCheck:
    """What an approval policy sees for one call."""

    tool_name: str
    tool_input: Mapping[str, Any]
    call_id: str
    session_id: str
    approved_tools: frozenset[str]
    """Tools a person already approved in this session (what `once()` looks at)."""


@dataclass(frozen=True)
class ApprovalDecision:
    """A policy's decision with a reason (shown to the model when it refuses)."""

    type: Literal["approved", "denied"]
    reason: str | None = None


PolicyResult = bool | str | ApprovalDecision


class _Policy:
    """A named ready-made policy (so info and errors can name it)."""

    def __init__(self, name: str, decide: Callable[[ApprovalCheck], PolicyResult]) -> None:
        self.name = name
        self._decide = decide

    def __call__(self, check: ApprovalCheck) -> PolicyResult:
        return self._decide(check)

    def __repr__(self) -> str:
        return f"{self.name}()"


def always() -> _Policy:
    """Ask a person before every call."""
    return _Policy("always", lambda check: True)


def never() -> _Policy:
    """Never ask (the default)."""
    return _Policy("never", lambda check: False)


def once() -> _Policy:
    """Ask the first time a session calls the tool; once a person approved it, allow later calls."""
    return _Policy("once", lambda check: check.tool_name not in check.approved_tools)


async def decide(policy: object, check: ApprovalCheck) -> tuple[Decision, str | None]:
    """Run a tool's approval setting for one call: `(decision, reason)`.

    Raises:
        ValueError: The policy returned something that is not a decision.
    """
    if policy is True:
        return "user-approval", None
    if policy is False or policy is None:
        return "not-applicable", None
    if not callable(policy):
        raise ValueError(f"needs_approval must be True, False or a function, not {policy!r}")
    result = policy(check)
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, ApprovalDecision):
        return result.type, result.reason
    if result is True:
        return "user-approval", None
    if result is False or result is None:
        return "not-applicable", None
    if result in ("user-approval", "not-applicable", "approved", "denied"):
        decision: Decision = result
        return decision, None
    raise ValueError(f"an approval policy returned {result!r}; return True, False, or a decision string")


def new_request_id() -> str:
    """A request id in eve's shape (`aitxt-` and 24 letters and digits)."""
    return "aitxt-" + "".join(secrets.choice(_ALPHABET) for _ in range(24))


def humanize(tool_name: str) -> str:
    """`dangerous_action` -> `Dangerous action` (the label in an approval prompt)."""
    words = tool_name.replace("-", " ").replace("_", " ").split()
    text = " ".join(words) if words else tool_name
    return text[:1].upper() + text[1:]


def approval_request(request_id: str, call_id: str, tool_name: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """The `input.requested` entry of a tool approval."""
    return {
        "action": {"callId": call_id, "input": dict(tool_input), "kind": "tool-call", "toolName": tool_name},
        "allowFreeform": False,
        "display": "confirmation",
        "kind": "tool-approval",
        "options": [dict(option) for option in OPTIONS],
        "prompt": f"Approve {humanize(tool_name)}?",
        "requestId": request_id,
    }


def match_option(options: list[dict[str, Any]], text: str) -> str | None:
    """The option a plain-text answer picks: by id, label (any case) or 1-based number; None if none."""
    answer = text.strip()
    lowered = answer.casefold()
    for option in options:
        if lowered in (str(option["id"]).casefold(), str(option.get("label", "")).casefold()):
            return str(option["id"])
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return str(options[int(answer) - 1]["id"])
    if lowered == "deny":
        return "deny"
    return None
