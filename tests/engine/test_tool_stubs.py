"""Tool stub rules: validation, first match wins, outcomes advance and repeat, limits."""

from __future__ import annotations

from typing import Any

import pytest

from eve_runtime.engine.tool_stubs import MAX_RULES, StubsInvalid, ToolStubBook, parse_stubs, stubbed_outcome
from eve_runtime.messages import ToolCall


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"c-{name}-{len(arguments)}", name=name, arguments=arguments)


def test_the_first_matching_rule_wins_and_outcomes_advance_then_repeat() -> None:
    book = ToolStubBook()
    book.register(
        "s1",
        parse_stubs(
            [
                {"id": "milk", "tool": "done", "match": {"task": {"const": "milk"}}, "outcome": {"response": True}},
                {"id": "any", "tool": "done", "outcomes": [{"response": 1}, {"throw": {"message": "down"}}]},
            ]
        ),
    )
    taken = [book.take("s1", _call("done", task=task)) for task in ("milk", "dog", "milk", "cat", "cat")]
    assert [(o.response, o.throw) for o in taken if o is not None] == [
        (True, None),
        (1, None),
        (True, None),
        (None, {"message": "down", "name": "Error"}),
        (None, {"message": "down", "name": "Error"}),
    ]
    assert book.take("s1", _call("other")) is None  # no rule: the real tool runs
    assert book.take("s2", _call("done", task="milk")) is None  # another session has no rules


def test_a_match_needs_every_listed_argument() -> None:
    (rule,) = parse_stubs(
        [
            {
                "id": "open",
                "tool": "search",
                "match": {
                    "query": {"type": "string", "pattern": "milk"},
                    "filter": {"type": "object", "properties": {"status": {"const": "open"}}, "required": ["status"]},
                },
                "outcome": {"response": []},
            }
        ]
    )
    assert rule.matches(_call("search", query="buy milk", filter={"status": "open"}, extra=1))
    assert not rule.matches(_call("search", query="buy milk"))
    assert not rule.matches(_call("search", query="bread", filter={"status": "open"}))


@pytest.mark.parametrize(
    ("stubs", "fragment"),
    [
        ({"id": "x"}, "is a list of rules"),
        ([{"tool": "t", "outcome": {"response": 1}}], "needs an 'id'"),
        ([{"id": "x", "tool": "t", "outcome": {"response": 1}}] * 2, "used twice"),
        ([{"id": "x", "tool": "t"}], "exactly one of 'outcome' or 'outcomes'"),
        ([{"id": "x", "tool": "t", "outcomes": []}], "non-empty list"),
        (
            [{"id": "x", "tool": "t", "outcome": {"response": 1, "throw": {"message": "m"}}}],
            "exactly one of 'response'",
        ),
        ([{"id": "x", "tool": "t", "outcome": {"throw": {}}}], "needs a 'message'"),
        ([{"id": "x", "tool": "t", "match": {"a": {"$ref": "#/x"}}, "outcome": {"response": 1}}], "uses $ref"),
        ([{"id": "x", "tool": "t", "match": {"a": {"const": [1]}}, "outcome": {"response": 1}}], "object or array"),
        ([{"id": "x", "tool": "t", "match": {"a": {"type": "nope"}}, "outcome": {"response": 1}}], "not a valid JSON"),
        ([{"id": str(i), "tool": "t", "outcome": {"response": 1}} for i in range(MAX_RULES + 1)], "at most 100"),
    ],
)
def test_malformed_rules_are_refused_with_the_fix(stubs: Any, fragment: str) -> None:
    with pytest.raises(StubsInvalid, match=fragment.replace("$", r"\$").replace("(", r"\(")):
        parse_stubs(stubs)


def test_outcomes_become_tool_results() -> None:
    call = _call("t")
    done = stubbed_outcome(
        call, parse_stubs([{"id": "a", "tool": "t", "outcome": {"response": {"ok": 1}}}])[0].outcomes[0]
    )
    assert (done.status, done.output, done.model_content) == ("completed", {"ok": 1}, '{"ok":1}')
    thrown = parse_stubs([{"id": "b", "tool": "t", "outcome": {"throw": {"message": "late", "name": "TimeoutError"}}}])
    failed = stubbed_outcome(call, thrown[0].outcomes[0])
    assert (failed.status, failed.model_content) == ("failed", "TimeoutError: late")
