"""Reading streams written by older eve servers (stream versions 21 to 24) as version 26 events.

What changed on the wire, and what the normaliser does about it:

- Versions 21 to 24 recorded `message.appended` and `reasoning.appended` with the text so far
  (`messageSoFar`, `reasoningSoFar`) beside the delta. Version 25 made appends delta-only: the
  snapshot is dropped, and when an old event has no delta it is worked out from the snapshot
  before it (per turn, step and kind).
- Version 24 introduced `action.input.appended`, with the UTF-16 position of each piece
  (`inputTextOffset`); version 25 dropped the offset.
- Versions 21 to 23 streamed a tool call's input as `action.input.partial` with the input so far
  (`inputTextSoFar`); it becomes the `action.input.appended` of its delta.
- eve 0.75 and earlier recorded `load-skill` entries of `actions.requested` without the skill's
  `name`; it is taken from the entry's input (`skill`), whatever the version.

Versions 25 and 26 differ in nothing a reader sees.
"""

from __future__ import annotations

from typing import Any

from eve_runtime.client.parts import Event

__all__ = ["CURRENT", "STREAM_VERSIONS", "LegacyNormaliser", "named_skill_loads", "normaliser_for"]

CURRENT = 26
STREAM_VERSIONS = frozenset(str(version) for version in range(21, CURRENT + 1))
"""`x-eve-stream-version` values this client reads."""
DELTA_ONLY = 25
"""The first version whose appends carry deltas only."""

_SNAPSHOTS = {
    "message.appended": ("messageSoFar", "messageDelta"),
    "reasoning.appended": ("reasoningSoFar", "reasoningDelta"),
    "action.input.partial": ("inputTextSoFar", "inputTextDelta"),
}


def _delta(previous: str, snapshot: str) -> str:
    """What a snapshot adds to the one before it (all of it when it does not extend it)."""
    return snapshot[len(previous) :] if snapshot.startswith(previous) else snapshot


class LegacyNormaliser:
    """Turns the events of one pre-25 stream into their version 26 shape, in order (it keeps snapshots)."""

    def __init__(self) -> None:
        self._so_far: dict[tuple[str, Any, Any, Any], str] = {}

    def __call__(self, event: Event) -> Event:
        kind = event.get("type")
        data = event.get("data")
        if not isinstance(data, dict) or not isinstance(kind, str):
            return event
        data = dict(data)
        if kind in _SNAPSHOTS:
            snapshot_key, delta_key = _SNAPSHOTS[kind]
            snapshot = data.pop(snapshot_key, None)
            if isinstance(snapshot, str):
                where = (kind, data.get("turnId"), data.get("stepIndex"), data.get("callId"))
                previous = self._so_far.get(where, "")
                self._so_far[where] = snapshot
                if not isinstance(data.get(delta_key), str):
                    data[delta_key] = _delta(previous, snapshot)
            data.pop("messageOffset", None)
            data.pop("reasoningOffset", None)
            if kind == "action.input.partial":
                kind = "action.input.appended"
                data.pop("input", None)  # the parsed input so far: version 26 streams text only
        elif kind == "action.input.appended":
            data.pop("inputTextOffset", None)
        return {**event, "type": kind, "data": data}


def named_skill_loads(event: Event) -> Event:
    """An `actions.requested` whose `load-skill` entries all carry the skill's `name` (when the input names it)."""
    data = event.get("data")
    actions = data.get("actions") if isinstance(data, dict) else None
    if event.get("type") != "actions.requested" or not isinstance(actions, list) or not isinstance(data, dict):
        return event
    named = []
    for action in actions:
        if isinstance(action, dict) and action.get("kind") == "load-skill" and "name" not in action:
            skill = action["input"].get("skill") if isinstance(action.get("input"), dict) else None
            if isinstance(skill, str) and skill:
                action = {**action, "name": skill}
        named.append(action)
    return {**event, "data": {**data, "actions": named}}


def normaliser_for(version: str) -> LegacyNormaliser | None:
    """The normaliser of a stream of `version` (None: its appends are delta-only already)."""
    return LegacyNormaliser() if int(version) < DELTA_ONLY else None
