"""Scoped assertions: what a run, a session or a turn did, read from its events.

[`Scope`][eve_runtime.evals.scope.Scope] is shared by `t` (the whole run: every session), an
`EvalSession` (one session) and an `EvalTurn` (one turn). Each method records a gate by default
and returns the [`Assertion`][eve_runtime.evals.assertions.Assertion], whose severity can change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from eve_runtime.client import Conversation
from eve_runtime.client.parts import Event, ToolCall
from eve_runtime.evals.assertions import Assertion, value_matches

__all__ = ["EventMatcher", "Scope", "tool_calls"]

EventMatcher = Mapping[str, Any]
"""`{"type": "...", "data": {...partial...}, "times": n}` for `event_order`."""
_FAILED_EVENTS = ("turn.failed", "step.failed", "session.failed")
_STATUS = {"completed": "completed", "failed": "failed", "rejected": "rejected"}


def tool_calls(events: Sequence[Event]) -> list[ToolCall]:
    """The tool calls in `events`, in the order they were requested."""
    return list(Conversation.from_events(events).tool_calls.values())


def _status(call: ToolCall) -> str:
    return _STATUS.get(call.state, "pending")


def _event_matches(event: Event, matcher: EventMatcher) -> bool:
    if event.get("type") != matcher.get("type"):
        return False
    data = matcher.get("data")
    return data is None or value_matches(data, event.get("data"))


class Scope:
    """The assertions over a scope's events. Subclasses give `_events()`, `_parked()` and `_record`."""

    _scope_name = "run"

    def _events(self) -> list[Event]:
        raise NotImplementedError

    def _parked(self) -> bool:
        """Whether the scope's last turn waits on unanswered input."""
        raise NotImplementedError

    def _record(self, assertion: Assertion) -> Assertion:
        raise NotImplementedError

    def _check(self, name: str, ok: bool, message: str, **details: Any) -> Assertion:
        return self._record(Assertion(name, 1.0 if ok else 0.0, message, scope=self._scope_name, details=details))

    def _failures(self) -> list[str]:
        found = []
        for event in self._events():
            if event.get("type") in _FAILED_EVENTS:
                data = event.get("data")
                data = data if isinstance(data, dict) else {}
                error = data["error"] if isinstance(data.get("error"), dict) else data
                found.append(f"{event['type']}: {error.get('code', '')} {error.get('message', '')}".strip())
        return found

    def _text(self) -> str:
        conversation = Conversation.from_events(self._events())
        return "\n".join(m.text for m in conversation.messages if m.role == "assistant")

    # -- outcomes ---------------------------------------------------------------------------

    def completed(self) -> Assertion:
        """It did not fail, and did not stop on unanswered input."""
        failures, parked = self._failures(), self._parked()
        message = "; ".join(failures) or ("it waits for input" if parked else "completed")
        return self._check("completed", not failures and not parked, message)

    def did_not_fail(self) -> Assertion:
        """No `turn.failed`, `step.failed` or `session.failed` (waiting for input is fine)."""
        failures = self._failures()
        return self._check("did_not_fail", not failures, "; ".join(failures) or "no failure")

    def waiting(self) -> Assertion:
        """It stopped on unanswered input (an approval, a question)."""
        parked = self._parked()
        return self._check("waiting", parked, "waits for input" if parked else "does not wait for input")

    def message_includes(self, token: str | re.Pattern[str]) -> Assertion:
        """The assistant's text contains `token` (a string, or a compiled regex that must match)."""
        text = self._text()
        found = token.search(text) is not None if isinstance(token, re.Pattern) else token in text
        shown = token.pattern if isinstance(token, re.Pattern) else token
        return self._check("message_includes", found, f"{'found' if found else 'missing'} {shown!r} in {text[:200]!r}")

    def output_equals(self, expected: Any) -> Assertion:
        """The structured output (an output schema's `result.completed`) equals `expected`."""
        output = Conversation.from_events(self._events()).result
        return self._check("output_equals", output == expected, f"output {output!r}")

    def output_matches(self, schema: Mapping[str, Any]) -> Assertion:
        """The structured output validates against a JSON Schema."""
        output = Conversation.from_events(self._events()).result
        errors = list(Draft202012Validator(schema).iter_errors(output))
        message = f"does not match: {errors[0].message}" if errors else "matches the schema"
        return self._check("output_matches", output is not None and not errors, message)

    # -- tools ------------------------------------------------------------------------------

    def _calls(self, name: str, matcher: Mapping[str, Any]) -> list[ToolCall]:
        picked = []
        for call in tool_calls(self._events()):
            if call.name != name:
                continue
            if "input" in matcher and not value_matches(matcher["input"], call.input):
                continue
            if "output" in matcher and (call.state != "completed" or not value_matches(matcher["output"], call.output)):
                continue
            if "status" in matcher and _status(call) != matcher["status"]:
                continue
            if "is_error" in matcher and (call.state == "failed") != matcher["is_error"]:
                continue
            if matcher.get("is_error") is False and call.state != "completed":
                continue
            picked.append(call)
        return picked

    def called_tool(
        self,
        name: str,
        *,
        input: Any = None,
        output: Any = None,
        status: str | None = None,
        is_error: bool | None = None,
        times: int | None = None,
    ) -> Assertion:
        """A matching call to `name` happened (`times`: exactly that many). Matchers: see `value_matches`."""
        matcher = _matcher(input=input, output=output, status=status, is_error=is_error)
        found = len(self._calls(name, matcher))
        ok = found == times if times is not None else found > 0
        want = f"exactly {times}" if times is not None else "at least 1"
        return self._check("called_tool", ok, f"{name}: {found} matching call(s), want {want}", tool=name)

    def not_called_tool(self, name: str, *, input: Any = None) -> Assertion:
        """No (matching) call to `name`."""
        found = len(self._calls(name, _matcher(input=input)))
        return self._check("not_called_tool", found == 0, f"{name}: {found} matching call(s), want none", tool=name)

    def loaded_skill(self, skill: str, *, times: int | None = None) -> Assertion:
        """The skill was loaded (`load_skill` called with it)."""
        return self.called_tool("load_skill", input={"skill": skill}, times=times).label("loaded_skill")

    def called_subagent(
        self, name: str, *, output: Any = None, status: str | None = None, times: int | None = None
    ) -> Assertion:
        """A delegation to the subagent `name` happened and settled (`output`, `status` of its task)."""
        found = 0
        for event in self._events():
            data = event.get("data")
            if event.get("type") != "task.settled" or not isinstance(data, dict) or data.get("kind") != "agent":
                continue
            if data.get("name") != name or (status is not None and data.get("status") != status):
                continue
            if output is not None and not value_matches(output, data.get("output")):
                continue
            found += 1
        ok = found == times if times is not None else found > 0
        want = f"exactly {times}" if times is not None else "at least 1"
        return self._check("called_subagent", ok, f"{name}: {found} matching delegation(s), want {want}", agent=name)

    def tool_order(self, names: Sequence[str]) -> Assertion:
        """The tools were called in this order (other calls may come between)."""
        called = [call.name for call in tool_calls(self._events())]
        position = 0
        for name in called:
            if position < len(names) and name == names[position]:
                position += 1
        ok = position == len(names)
        return self._check("tool_order", ok, f"calls {called}, want the order {list(names)}")

    def used_no_tools(self) -> Assertion:
        """No tool calls at all."""
        called = [call.name for call in tool_calls(self._events())]
        return self._check("used_no_tools", not called, f"calls {called}")

    def max_tool_calls(self, limit: int) -> Assertion:
        """At most `limit` tool calls."""
        count = len(tool_calls(self._events()))
        return self._check("max_tool_calls", count <= limit, f"{count} tool call(s), at most {limit}")

    def no_failed_actions(self) -> Assertion:
        """No tool call failed."""
        failed = [call.name for call in tool_calls(self._events()) if call.state == "failed"]
        return self._check("no_failed_actions", not failed, f"failed calls: {failed}" if failed else "none failed")

    # -- events -----------------------------------------------------------------------------

    def event(
        self,
        kind: str | Callable[[list[Event]], bool],
        label: str | None = None,
        *,
        data: Any = None,
        times: int | None = None,
    ) -> Assertion:
        """An event of type `kind` happened, or a predicate over all the events holds.

        With a type, `data` matches the event's data partially and `times` asks for exactly so
        many; with a predicate, `label` says what it checks.
        """
        if callable(kind):
            ok = bool(kind(self._events()))
            return self._check("event", ok, label or "predicate")
        found = sum(1 for event in self._events() if _event_matches(event, {"type": kind, "data": data}))
        ok = found == times if times is not None else found > 0
        return self._check("event", ok, f"{found} {kind} event(s)", type=kind)

    def not_event(self, kind: str, *, data: Any = None) -> Assertion:
        """No event of type `kind` (with `data` partially matching)."""
        found = sum(1 for event in self._events() if _event_matches(event, {"type": kind, "data": data}))
        return self._check("not_event", found == 0, f"{found} {kind} event(s), want none", type=kind)

    def event_order(self, matchers: Sequence[EventMatcher]) -> Assertion:
        """Groups of matching events occur in this order (`times` per group, default 1)."""
        events = self._events()
        index = 0
        for matcher in matchers:
            need = int(matcher.get("times", 1))
            while need and index < len(events):
                if _event_matches(events[index], matcher):
                    need -= 1
                index += 1
            if need:
                return self._check("event_order", False, f"{matcher.get('type')} missing in the order given")
        return self._check("event_order", True, "in order")


def _matcher(**given: Any) -> dict[str, Any]:
    return {key: value for key, value in given.items() if value is not None}
