"""`eve sessions show` renders a session's conversation: a call recovery closed shows as ended."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from eve_cli._session_view import render_conversation
from eve_runtime.client import Conversation


def _event(n: int, type_: str, **data: Any) -> dict[str, Any]:
    return {"type": type_, "data": {"turnId": "turn_0", "stepIndex": 0, "sequence": 0, **data}, "meta": {"id": f"e{n}"}}


def test_an_abandoned_call_shows_as_ended() -> None:
    text = "This call was interrupted before its result was recorded."
    events = [
        _event(
            0, "actions.requested", actions=[{"callId": "c1", "kind": "tool-call", "toolName": "slow", "input": {}}]
        ),
        _event(
            1,
            "action.result",
            status="failed",
            error={"code": "ACTION_ABANDONED", "message": text},
            result={"callId": "c1", "kind": "tool-result", "toolName": "slow", "output": text, "isError": True},
        ),
    ]
    conversation = Conversation.from_events(events)
    assert conversation.tool_calls["c1"].state == "abandoned"
    console = Console(record=True, width=200)
    render_conversation("wrun_x", conversation, console)
    shown = console.export_text()
    assert f"abandoned {text}" in shown and "no result yet" not in shown
