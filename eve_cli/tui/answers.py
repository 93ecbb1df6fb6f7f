"""Reading what a person types as the answer to a pending request (an approval or a question).

The terminal UI always answers with a structured `inputResponses` entry, never with plain text:
eve never lets plain text answer an approval relayed from a subagent, and a structured answer
says exactly which option was meant.

A tool approval's negative option is `cancel`, labelled "Cancel", on the wire (eve's id and
label); the terminal UI shows it as "Deny", since it refuses the call (the turn goes on), while
Ctrl-C and /cancel cancel the turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eve_runtime.client import InputRequest

__all__ = ["answer_for", "answer_hint", "option_label"]

_YES = {"y", "yes", "approve", "approved", "ok", "allow"}
_NO = {"n", "no", "deny", "denied", "cancel", "reject", "decline"}
_APPROVE_IDS = ("approve", "approved", "allow", "yes")
_DENY_IDS = ("cancel", "deny", "denied", "reject", "no")


def option_label(request: InputRequest, option: dict[str, Any]) -> str:
    """How the terminal UI names an option: its label, except "Deny" for an approval's refusal."""
    option_id = str(option.get("id", ""))
    if request.kind == "tool-approval" and option_id.lower() in _DENY_IDS:
        return "Deny"
    return str(option.get("label") or option_id)


def _option_id(request: InputRequest, wanted: tuple[str, ...], fallback: int) -> str | None:
    ids = request.option_ids
    for option_id in ids:
        if option_id.lower() in wanted:
            return option_id
    return ids[fallback] if ids else None


def answer_for(request: InputRequest, text: str) -> dict[str, Any] | None:
    """The response `text` gives to `request` (`{requestId, optionId}` or `{requestId, text}`), or None."""
    typed = text.strip()
    lowered = typed.lower()
    if not typed:
        return None
    option_id: str | None = None
    if typed.isdigit() and 1 <= int(typed) <= len(request.options):
        option_id = request.option_ids[int(typed) - 1]
    else:
        for option in request.options:
            if lowered in (str(option.get("id", "")).lower(), str(option.get("label", "")).lower()):
                option_id = str(option.get("id"))
    if option_id is None and request.kind == "tool-approval" and request.options:
        if lowered in _YES:
            option_id = _option_id(request, _APPROVE_IDS, 0)
        elif lowered in _NO:
            option_id = _option_id(request, _DENY_IDS, -1)
    if option_id is not None:
        return {"requestId": request.request_id, "optionId": option_id}
    if request.allow_freeform or not request.options:
        return {"requestId": request.request_id, "text": typed}
    return None


def answer_hint(request: InputRequest) -> str:
    """What to type to answer `request`."""
    if request.kind == "tool-approval":
        return "Answer with y (approve) or n (deny), or a number; /cancel stops the turn."
    names = ", ".join(f"{index}) {option_label(request, option)}" for index, option in enumerate(request.options, 1))
    return f"Answer with one of: {names}; /cancel stops the turn."
