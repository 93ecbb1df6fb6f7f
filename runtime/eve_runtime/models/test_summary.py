"""How the offline `test` model answers a compaction request: a short, deterministic summary.

eve compacts a long session by asking the model to summarize older messages; the request's user
message starts with a `<previous-checkpoint>` block (the last summary, or `(none)`) followed by
a `<conversation>` block holding the transcript, one `### <role>` header per message. The `test`
model recognizes that shape and, instead of echoing it, answers

    summary of N messages; last user message: <up to 12 words>

where N counts the messages summarized so far (the previous summary's N plus this transcript's),
so the summary stays the same size however long the session lives. A transcript line
`/fail-summary TEXT` (in any message, e.g. a user's) makes the summarization fail with a
non-retryable `ModelError` carrying TEXT; outside a summary request that line is ordinary text.
"""

from __future__ import annotations

import re

from eve_runtime.models.base import ModelError

__all__ = ["SUMMARY_REQUEST_PREFIX", "is_summary_request", "summarize"]

SUMMARY_REQUEST_PREFIX = "<previous-checkpoint>"
"""How a compaction request's user message starts."""

_BLOCK = re.compile(r"<(previous-checkpoint|conversation)>\n?(.*?)\n?</\1>", re.DOTALL)
_COUNT = re.compile(r"^summary of (\d+) messages?")
_LAST_USER = re.compile(r"; last user message: (.*)$")
_FAIL = "/fail-summary"
_LAST_WORDS = 12


def is_summary_request(text: str) -> bool:
    """Whether a user message asks for a compaction summary."""
    return text.startswith(SUMMARY_REQUEST_PREFIX)


def summarize(text: str) -> str:
    """The summary of a compaction request (see the module docstring).

    Raises:
        ModelError: The transcript holds a `/fail-summary` line (non-retryable).
    """
    blocks = {name: body for name, body in _BLOCK.findall(text)}
    previous = blocks.get("previous-checkpoint", "").strip()
    transcript = blocks.get("conversation", "")
    for line in transcript.splitlines():
        stripped = line.strip()
        if stripped == _FAIL or stripped.startswith(_FAIL + " "):
            reason = stripped[len(_FAIL) :].strip()
            raise ModelError(reason or "the test model was asked to fail the summary (/fail-summary)", retryable=False)
    counted = _COUNT.match(previous)
    total = int(counted.group(1)) if counted else 0
    last_user: str | None = None
    current: str | None = None
    body: list[str] = []
    for line in [*transcript.splitlines(), "### end"]:
        if line.startswith("### "):
            if current == "user":
                first = next((b for b in body if b.strip()), "")
                last_user = " ".join(first.split()[:_LAST_WORDS])
            if line != "### end":
                total += 1
            current, body = line[4:].strip(), []
        else:
            body.append(line)
    if last_user is None:
        carried = _LAST_USER.search(previous)
        last_user = carried.group(1) if carried else ""
    summary = f"summary of {total} messages"
    return f"{summary}; last user message: {last_user}" if last_user else summary
