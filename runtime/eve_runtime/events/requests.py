"""The requests a person answers, as `input.requested` carries them, and the answers they give.

A request has a `requestId` (eve's shape), a `kind` (`tool-approval`, `session-limit`,
`question`), a prompt and its options; a plain-text answer picks an option by id, label or number
([`match_option`][eve_runtime.events.requests.match_option]).
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping
from typing import Any

__all__ = ["APPROVE", "NEGATIVE_OPTIONS", "approval_request", "humanize", "match_option", "new_request_id"]

APPROVE = "approve"
NEGATIVE_OPTIONS = ("cancel", "deny")
"""eve's current negative option is `cancel`; older clients answer `deny`. Both refuse."""
OPTIONS = ({"id": APPROVE, "label": "Approve"}, {"id": "cancel", "label": "Cancel"})
_ALPHABET = string.ascii_letters + string.digits


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
