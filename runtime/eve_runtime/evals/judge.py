"""The LLM judge: `t.judge(criteria)` asks a model whether an answer meets the criteria, scored 0-1.

The judge is the configured model (the eval's `judge`, else `evals_config.py`'s, else the agent's
own model), called once per judgment with no tools. It must answer with a JSON object
`{"score": <0..1>, "reason": "..."}` (a bare `yes`/`no` or `pass`/`fail` is read as 1 or 0).
Anything else, or a model error, makes the judgment an error, which fails the eval: a judge that
cannot judge never passes silently.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eve_runtime.messages import SystemMessage, UserMessage
from eve_runtime.models.base import Model, ModelRequest, TextDelta

__all__ = ["JUDGE_INSTRUCTIONS", "JudgeError", "judge_prompt", "parse_verdict", "run_judge"]

JUDGE_INSTRUCTIONS = (
    "You grade the answer of an AI agent against criteria. Read the input the agent got and its output, "
    "decide how well the output meets the criteria, and answer with one JSON object and nothing else: "
    '{"score": <a number from 0 (does not meet them) to 1 (fully meets them)>, "reason": "<one sentence>"}'
)
_OBJECT = re.compile(r"\{[^{}]*\}")
_WORDS = {"yes": 1.0, "pass": 1.0, "true": 1.0, "no": 0.0, "fail": 0.0, "false": 0.0}


class JudgeError(Exception):
    """The judge could not grade (the model failed, or its answer is not a verdict)."""


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def judge_prompt(criteria: str, state: dict[str, Any]) -> str:
    """The message the judge model receives."""
    parts = [f"Criteria: {criteria}"]
    parts.extend(f"{key.capitalize()}:\n{_shown(value)}" for key, value in state.items())
    return "\n\n".join(parts)


def parse_verdict(text: str) -> tuple[float, str]:
    """The score and reason in a judge's answer.

    Raises:
        JudgeError: The answer holds no score from 0 to 1.
    """
    for candidate in _OBJECT.findall(text):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        score = data.get("score") if isinstance(data, dict) else None
        if isinstance(score, (int, float)) and not isinstance(score, bool) and 0 <= score <= 1:
            return float(score), str(data.get("reason") or "")
    word = text.strip().strip(".!").lower()
    if word in _WORDS:
        return _WORDS[word], text.strip()
    raise JudgeError(f'the judge did not answer with {{"score": 0..1}}: {text.strip()[:200]!r}')


async def run_judge(model: Model, criteria: str, state: dict[str, Any]) -> tuple[float, str]:
    """Ask `model` to grade `state` against `criteria`; the score and the judge's reason.

    Raises:
        JudgeError: The model failed or did not answer with a verdict.
    """
    request = ModelRequest(
        messages=[SystemMessage(content=JUDGE_INSTRUCTIONS), UserMessage(content=judge_prompt(criteria, state))]
    )
    pieces: list[str] = []
    try:
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                pieces.append(event.text)
    except Exception as exc:  # a provider failure is the judgment's error, reported in the eval
        raise JudgeError(f"the judge model {model.model_id} failed: {exc}") from exc
    return parse_verdict("".join(pieces))
