"""Severity and verdicts, the matcher mini-language, the value builders, and reading a judge's answer."""

from __future__ import annotations

import re

import pytest

from eve_runtime.evals import equals, includes, matches, satisfies, similarity
from eve_runtime.evals.assertions import Assertion, value_matches, verdict
from eve_runtime.evals.judge import JudgeError, parse_verdict, run_judge
from eve_runtime.messages import Message
from eve_runtime.models import FunctionModel


def _a(score: float) -> Assertion:
    return Assertion("x", score, "")


def test_gate_soft_and_at_least() -> None:
    assert not _a(0.5).passed and _a(1.0).passed
    assert _a(0.5).gate(0.4).passed and not _a(0.3).gate(0.4).passed
    assert _a(0.0).soft().passed  # tracked only
    assert not _a(0.5).at_least(0.8).passed and _a(0.8).at_least(0.8).passed
    with pytest.raises(ValueError, match="between 0 and 1"):
        _a(1).gate(2)


def test_the_verdict() -> None:
    assert verdict([_a(1)]) == "passed"
    assert verdict([_a(1), _a(0)]) == "failed"
    assert verdict([_a(1), _a(0.5).soft(0.9)]) == "scored"
    assert verdict([Assertion("j", 0, "", severity="soft", error="no model")]) == "failed"
    assert verdict([]) == "failed"
    assert verdict([_a(1)], error="boom") == "error"
    assert verdict([_a(0)], skipped=True) == "skipped"


def test_value_matches() -> None:
    assert value_matches({"a": 1}, {"a": 1, "b": 2})
    assert not value_matches({"a": 1, "c": 3}, {"a": 1})
    assert value_matches({"a": {"b": re.compile("^x")}}, {"a": {"b": "xyz"}})
    assert value_matches(lambda v: v > 2, 3) and not value_matches(lambda v: v > 2, 1)
    assert value_matches([1, {"a": 1}], [1, {"a": 1, "z": 0}]) and not value_matches([1], [1, 2])
    assert value_matches(re.compile("Sunny"), {"condition": "Sunny"})


def test_builders() -> None:
    assert includes("b").score("abc")[0] == 1 and includes(re.compile(r"\d")).score("abc")[0] == 0
    assert equals({"a": [1]}).score({"a": [1]})[0] == 1 and equals(1).score(2)[0] == 0
    assert matches({"type": "integer"}).score(3)[0] == 1 and matches({"type": "integer"}).score("3")[0] == 0
    assert similarity("kitten").score("sitting")[0] == pytest.approx(1 - 3 / 7)
    assert similarity("kitten").severity == "soft" and equals(1).severity == "gate"
    assert satisfies(lambda v: v < 3, "small").score(2) == (1.0, "small")


def test_a_pydantic_model_as_the_schema() -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        name: str

    assert matches(City).score({"name": "Paris"})[0] == 1 and matches(City).score({"nom": "Paris"})[0] == 0


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ('{"score": 0.75, "reason": "ok"}', 0.75),
        ('Sure: {"score": 1, "reason": "fine"} done', 1.0),
        ("yes", 1.0),
        ("No.", 0.0),
    ],
)
def test_reading_a_verdict(answer: str, score: float) -> None:
    assert parse_verdict(answer)[0] == score


@pytest.mark.parametrize("answer", ["maybe", '{"score": 3}', '{"score": "high"}', ""])
def test_an_answer_without_a_verdict_is_an_error(answer: str) -> None:
    with pytest.raises(JudgeError):
        parse_verdict(answer)


@pytest.mark.anyio
async def test_the_judge_sees_the_criteria_and_the_answer() -> None:
    seen: list[str] = []

    def grade(messages: list[Message], info: object) -> str:
        seen.append(messages[-1].content)
        return '{"score": 0.6, "reason": "half"}'

    assert await run_judge(FunctionModel(grade), "Mentions Paris.", {"input": "q", "output": "Paris!"}) == (0.6, "half")
    assert "Criteria: Mentions Paris." in seen[0] and "Output:\nParis!" in seen[0]

    def fail(messages: list[Message], info: object) -> str:
        raise RuntimeError("provider down")

    with pytest.raises(JudgeError, match="provider down"):
        await run_judge(FunctionModel(fail), "x", {})
