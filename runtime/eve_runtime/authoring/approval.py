"""Tool approval: deciding per call whether a person must approve it (`@tool(needs_approval=...)`).

A tool's `@tool(needs_approval=...)` is `True` (always ask), `False` (never), or a policy: a
function called with an [`ApprovalCheck`][eve_runtime.authoring.approval.ApprovalCheck] for every call,
returning `True`/`"user-approval"` (ask), `False`/`"not-applicable"` (run), `"approved"` (run
without asking), `"denied"` (refuse without asking), or an
[`ApprovalDecision`][eve_runtime.authoring.approval.ApprovalDecision] with a reason. `always()`, `never()`
`once()` (ask the first time a session calls the tool, then allow) and `auto()` (ask unless the tool
says it only reads: an MCP tool's `readOnlyHint`, an OpenAPI `GET`) are ready-made policies.
The requests a person then answers are shaped in `eve_runtime.events.requests`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ApprovalCheck", "ApprovalDecision", "Decision", "always", "auto", "decide", "never", "once"]

Decision = Literal["user-approval", "not-applicable", "approved", "denied"]


@dataclass(frozen=True)
class ApprovalCheck:
    """What an approval policy sees for one call."""

    tool_name: str
    tool_input: Mapping[str, Any]
    call_id: str
    session_id: str
    approved_tools: frozenset[str]
    """Tools a person already approved in this session (what `once()` looks at)."""
    read_only: bool = False
    """The tool says it changes nothing (what `auto()` looks at): an MCP tool annotated `readOnlyHint`,
    an OpenAPI operation with a safe method (`GET`, `HEAD`, `OPTIONS`). Authored tools never say so."""


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


def auto() -> _Policy:
    """Ask before a call unless the tool says it only reads (see `ApprovalCheck.read_only`)."""
    return _Policy("auto", lambda check: not check.read_only)


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
