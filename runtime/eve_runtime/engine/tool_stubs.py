"""Tool stubs: JSON outcomes that replace chosen tool executions in a session (eve's eval `stubs`).

A session created with stub rules (`POST /eve/v1/session` with `stubs`, granted by the server)
answers a matching call with the rule's outcome instead of running the tool; the events still show
the call and its result. Rules are tried top to bottom and the first match wins; with none, the
real tool runs. `outcomes` advance on each matching call and then repeat the last entry.

`match` is a map of argument name to a JSON Schema (a reference-free 2020-12 subset): every listed
argument must be present and valid. jsonschema (already required through `mcp`) checks them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from eve_runtime.messages import ToolCall
from eve_runtime.outcomes import ToolOutcome, failed_outcome

__all__ = [
    "MAX_CALLS",
    "MAX_DEPTH",
    "MAX_RULES",
    "StubOutcome",
    "StubRule",
    "StubsInvalid",
    "ToolStubBook",
    "parse_stubs",
    "stubbed_outcome",
]

MAX_RULES = 100
MAX_DEPTH = 32
MAX_CALLS = 10_000
UNSUPPORTED = frozenset(
    {
        "$ref",
        "$dynamicRef",
        "$defs",
        "definitions",
        "patternProperties",
        "format",
        "multipleOf",
        "minContains",
        "maxContains",
        "uniqueItems",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
    }
)


class StubsInvalid(ValueError):
    """The stub rules are not valid (the message names the rule and the fix)."""


@dataclass(frozen=True)
class StubOutcome:
    """One outcome: a JSON `response`, or an error to `throw` (`{"message", "name"?}`)."""

    response: Any = None
    throw: Mapping[str, str] | None = None


@dataclass(frozen=True)
class StubRule:
    """One rule: which tool (and which arguments) it answers, and its outcomes in order."""

    id: str
    tool: str
    outcomes: tuple[StubOutcome, ...]
    match: Mapping[str, Draft202012Validator] = field(default_factory=dict)

    def matches(self, call: ToolCall) -> bool:
        """Whether the call is to this rule's tool with every matched argument present and valid."""
        if call.name != self.tool:
            return False
        arguments = call.arguments
        return all(name in arguments and check.is_valid(arguments[name]) for name, check in self.match.items())


def _depth(value: Any, level: int = 0) -> int:
    if isinstance(value, Mapping):
        return max((_depth(item, level + 1) for item in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(item, level + 1) for item in value), default=level + 1)
    return level


def _unsupported(schema: Any) -> str | None:
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key in UNSUPPORTED:
                return str(key)
            if key in ("const", "enum") and any(
                isinstance(v, (dict, list)) for v in ([value] if key == "const" else value)
            ):
                return f"{key} with an object or array value"
            found = _unsupported(value)
            if found:
                return found
    elif isinstance(schema, list):
        for item in schema:
            found = _unsupported(item)
            if found:
                return found
    return None


def _outcome(rule_id: str, raw: Any) -> StubOutcome:
    if not isinstance(raw, Mapping) or len({"response", "throw"} & set(raw)) != 1:
        raise StubsInvalid(f"stub {rule_id!r}: each outcome holds exactly one of 'response' or 'throw'.")
    if "response" in raw:
        try:
            json.dumps(raw["response"], allow_nan=False)
        except (TypeError, ValueError):
            raise StubsInvalid(f"stub {rule_id!r}: the response is not JSON.") from None
        return StubOutcome(response=raw["response"])
    throw = raw["throw"]
    if not isinstance(throw, Mapping) or not isinstance(throw.get("message"), str) or not throw["message"]:
        raise StubsInvalid(f"stub {rule_id!r}: 'throw' needs a 'message' (and may name the error: 'name').")
    name = throw.get("name", "Error")
    if not isinstance(name, str) or not name:
        raise StubsInvalid(f"stub {rule_id!r}: 'throw.name' must be a non-empty string.")
    return StubOutcome(throw={"message": throw["message"], "name": name})


def _rule(raw: Any, seen: set[str]) -> StubRule:
    if not isinstance(raw, Mapping):
        raise StubsInvalid("each stub is an object: {id, tool, match?, outcome | outcomes}.")
    rule_id, tool = raw.get("id"), raw.get("tool")
    if not isinstance(rule_id, str) or not rule_id:
        raise StubsInvalid("each stub needs an 'id' (a non-empty string, unique in the session).")
    if rule_id in seen:
        raise StubsInvalid(f"stub {rule_id!r}: the id is used twice.")
    seen.add(rule_id)
    if not isinstance(tool, str) or not tool:
        raise StubsInvalid(f"stub {rule_id!r}: 'tool' names the tool it replaces.")
    if ("outcome" in raw) == ("outcomes" in raw):
        raise StubsInvalid(f"stub {rule_id!r}: give exactly one of 'outcome' or 'outcomes'.")
    listed = [raw["outcome"]] if "outcome" in raw else raw["outcomes"]
    if not isinstance(listed, list) or not listed:
        raise StubsInvalid(f"stub {rule_id!r}: 'outcomes' is a non-empty list.")
    match = raw.get("match") or {}
    if not isinstance(match, Mapping):
        raise StubsInvalid(f"stub {rule_id!r}: 'match' maps argument names to JSON Schemas.")
    validators: dict[str, Draft202012Validator] = {}
    for name, schema in match.items():
        problem = _unsupported(schema)
        if problem:
            raise StubsInvalid(f"stub {rule_id!r}: match.{name} uses {problem}, which stubs do not support.")
        if not isinstance(schema, (Mapping, bool)):
            raise StubsInvalid(f"stub {rule_id!r}: match.{name} must be a JSON Schema object.")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise StubsInvalid(f"stub {rule_id!r}: match.{name} is not a valid JSON Schema: {exc.message}") from None
        validators[str(name)] = Draft202012Validator(schema)
    return StubRule(rule_id, tool, tuple(_outcome(rule_id, item) for item in listed), validators)


def parse_stubs(raw: Any) -> tuple[StubRule, ...]:
    """Validate a `stubs` list (as JSON) into rules.

    Raises:
        StubsInvalid: The list, a rule, a matcher or an outcome is malformed, or over the limits.
    """
    if not isinstance(raw, list):
        raise StubsInvalid("'stubs' is a list of rules: [{id, tool, match?, outcome | outcomes}].")
    if len(raw) > MAX_RULES:
        raise StubsInvalid(f"at most {MAX_RULES} stub rules per session (got {len(raw)}).")
    if _depth(raw) > MAX_DEPTH:
        raise StubsInvalid(f"the stub rules nest deeper than {MAX_DEPTH} levels.")
    seen: set[str] = set()
    return tuple(_rule(item, seen) for item in raw)


@dataclass
class _Playback:
    rules: tuple[StubRule, ...]
    positions: dict[str, int] = field(default_factory=dict)
    calls: int = 0


class ToolStubBook:
    """The stub rules of this process's sessions, and how far each rule's outcomes have advanced."""

    def __init__(self, *, allowed: bool = False) -> None:
        self.allowed = allowed
        """Whether sessions may be created with stubs here (an eval runner's own server grants it)."""
        self._sessions: dict[str, _Playback] = {}

    def register(self, session_id: str, rules: tuple[StubRule, ...]) -> None:
        """Give a session its rules (fixed for its life)."""
        if rules:
            self._sessions[session_id] = _Playback(rules)

    def forget(self, session_id: str) -> None:
        """Drop a session's rules."""
        self._sessions.pop(session_id, None)

    def has(self, session_id: str) -> bool:
        """Whether the session has rules."""
        return session_id in self._sessions

    def take(self, session_id: str, call: ToolCall) -> StubOutcome | None:
        """The outcome for this call (advancing its rule), or None: the real tool runs."""
        playback = self._sessions.get(session_id)
        if playback is None or playback.calls >= MAX_CALLS:
            return None
        for rule in playback.rules:
            if rule.matches(call):
                playback.calls += 1
                position = playback.positions.get(rule.id, 0)
                playback.positions[rule.id] = position + 1
                return rule.outcomes[min(position, len(rule.outcomes) - 1)]
        return None


def stubbed_outcome(call: ToolCall, outcome: StubOutcome) -> ToolOutcome:
    """The call's result, from a stub outcome instead of the tool."""
    if outcome.throw is not None:
        name = outcome.throw.get("name") or "Error"
        return failed_outcome(call, "ACTION_RESULT_FAILED", outcome.throw["message"], name=name)
    response = outcome.response
    content = response if isinstance(response, str) else json.dumps(response, separators=(",", ":"))
    return ToolOutcome(call=call, status="completed", output=response, model_content=content)
