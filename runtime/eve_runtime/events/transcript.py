"""`transcript_of()`: the plain conversation of a session, as `{role, text}` messages.

A transcript is what a person would call the conversation: what they wrote and what the agent
answered. It is meant as context for another session or model (eve uses it to carry a replaced
session's conversation over), so it leaves out everything else the stream records.

Pure functions over event dicts, shared by server-side code (a dynamic instruction reading a
replaced session through `sessions.attach`) and the HTTP client (`eve_runtime.client`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, TypedDict

__all__ = ["TranscriptMessage", "transcript_of"]


class TranscriptMessage(TypedDict):
    """One message of a transcript."""

    role: Literal["user", "assistant"]
    text: str


def transcript_of(events: Iterable[dict[str, Any]], max_messages: int | None = None) -> list[TranscriptMessage]:
    """The `{role, text}` messages of a session's events, oldest first.

    Kept: the text of each received message (`message.received`) and each completed reply part
    (`message.completed` whose `finishReason` is not `tool-calls`). Left out: reasoning,
    narration (text written before tool calls), tool calls and their results, approvals and
    questions, and interrupted output (text that never completed). A `context.cleared` event
    starts the transcript over, so text the user cleared is never returned, and so does the end
    of a stranded session by a reset (`session.failed` with `code: "session_stranded"` and
    `details.trigger: "reset"`), as eve's `transcriptOf()` reads it. Events seen before
    (same `meta.id`) count once.

    Args:
        events: The session's events in stream order (a full read, or a read from a cursor).
        max_messages: Keep only the newest this many messages (None: all).

    Returns:
        The messages, oldest first.
    """
    messages: list[TranscriptMessage] = []
    seen: set[str] = set()
    for event in events:
        meta = event.get("meta")
        event_id = meta.get("id") if isinstance(meta, dict) else None
        if isinstance(event_id, str):
            if event_id in seen:
                continue
            seen.add(event_id)
        data = event.get("data")
        data = data if isinstance(data, dict) else {}
        kind = event.get("type")
        details = data.get("details")
        if kind == "context.cleared" or (
            kind == "session.failed"
            and data.get("code") == "session_stranded"
            and isinstance(details, dict)
            and details.get("trigger") == "reset"
        ):
            messages.clear()
        elif kind == "message.received" and data.get("kind") != "task.result":
            text = data.get("message")
            if isinstance(text, str) and text:
                messages.append({"role": "user", "text": text})
        elif kind == "message.completed" and data.get("finishReason") != "tool-calls":
            text = data.get("message")
            if isinstance(text, str) and text:
                messages.append({"role": "assistant", "text": text})
    if max_messages is not None:
        return messages[len(messages) - max_messages :] if max_messages > 0 else []
    return messages
