"""Session budgets: input tokens, output tokens and cost per session (`define_agent(limits=...)`).

When a model call takes a session past a budget, the next model call does not happen until a
person answers a `session-limit` prompt: `continue` grants a fresh window of each budget's size,
`stop` cancels the turn. Sessions that cannot ask anyone (task mode) fail instead, with
`SESSION_TOKEN_LIMIT_REACHED` or `SESSION_TOKEN_COST_LIMIT_REACHED`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from eve_runtime.authoring.config import DEFAULT_MAX_INPUT_TOKENS_PER_SESSION, LimitsConfig
from eve_runtime.checkpoint import SessionState

__all__ = ["LIMIT_TOOL", "Exceeded", "exceeded_limit", "grant", "limit_request"]

LimitKind = Literal["input", "output", "cost"]
LIMIT_TOOL = "session_limit_continuation"
OPTIONS = (
    {"id": "continue", "label": "Approve", "description": "Grant a fresh token budget", "style": "primary"},
    {"id": "stop", "label": "Stop", "description": "Stop now", "style": "danger"},
)
_NAMES = {"input": "input-token", "output": "output-token", "cost": "token-cost"}


@dataclass(frozen=True)
class Exceeded:
    """A budget the session went past."""

    kind: LimitKind
    used: float
    size: float

    @property
    def code(self) -> str:
        return "SESSION_TOKEN_COST_LIMIT_REACHED" if self.kind == "cost" else "SESSION_TOKEN_LIMIT_REACHED"

    @property
    def message(self) -> str:
        return f"This session has used {_amount(self.kind, self.used)}, past its {_NAMES[self.kind]} limit."


def _amount(kind: LimitKind, value: float) -> str:
    if kind == "cost":
        return f"${value:.4f}"
    return f"{int(value):,} {kind} tokens"


def _sizes(limits: LimitsConfig, *, is_root: bool) -> dict[LimitKind, float]:
    sizes: dict[LimitKind, float] = {}
    input_limit = limits.max_input_tokens_per_session
    if input_limit is None and is_root:
        input_limit = DEFAULT_MAX_INPUT_TOKENS_PER_SESSION
    candidates: tuple[tuple[LimitKind, float | Literal[False] | None], ...] = (
        ("input", input_limit),
        ("output", limits.max_output_tokens_per_session),
        ("cost", limits.max_token_cost_usd_per_session),
    )
    for kind, value in candidates:
        if value is not None and value is not False:
            sizes[kind] = float(value)
    return sizes


def _used(state: SessionState, kind: LimitKind) -> float:
    usage = state.usage
    if kind == "input":
        return usage.input_tokens
    if kind == "output":
        return usage.output_tokens
    return usage.cost_usd or 0.0


def exceeded_limit(state: SessionState, limits: LimitsConfig, *, is_root: bool) -> Exceeded | None:
    """The first budget the session is past (counting the windows granted so far), or None."""
    for kind, size in _sizes(limits, is_root=is_root).items():
        used = _used(state, kind)
        if used >= state.limit_base.get(kind, 0.0) + size:
            return Exceeded(kind, used, size)
    return None


def grant(state: SessionState, limits: LimitsConfig, *, is_root: bool) -> None:
    """`continue`: a fresh window of each budget's size, from what is used now."""
    for kind in _sizes(limits, is_root=is_root):
        state.limit_base[kind] = _used(state, kind)


def limit_request(session_id: str, exceeded: Exceeded) -> dict[str, Any]:
    """The `input.requested` entry of a session-limit prompt."""
    request_id = f"{session_id}:limit:{exceeded.kind}:{int(exceeded.used)}"
    return {
        "action": {"callId": request_id, "input": {}, "kind": "tool-call", "toolName": LIMIT_TOOL},
        "allowFreeform": False,
        "display": "confirmation",
        "kind": "session-limit",
        "options": [dict(option) for option in OPTIONS],
        "prompt": (
            f"This session has hit the {_NAMES[exceeded.kind]} limit ({_amount(exceeded.kind, exceeded.size)}) per "
            "session. This is a guardrail against defective long-running sessions. If session activity looks fine, "
            "just approve to keep going."
        ),
        "requestId": request_id,
    }
