"""What `define_eval` and `define_eval_config` return: graded cases in `evals/**/*.eval.py`.

An eval file's module-level `eval` (or a list of them, for a dataset) is an
[`EvalDefinition`][eve_runtime.authoring.evals.EvalDefinition]: an async `test(t)` that drives the
agent through `t` and records assertions. `evals/evals_config.py` holds the one
[`EvalConfig`][eve_runtime.authoring.evals.EvalConfig] of the app (the judge model, concurrency,
the default timeout). `eve eval` runs them (`eve_runtime.evals`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.errors import DefinitionError
from eve_runtime.models.base import Model

__all__ = ["EvalConfig", "EvalDefinition", "JudgeSettings", "define_eval", "define_eval_config"]

EvalTest = Callable[[Any], Awaitable[None]]
"""`async def test(t) -> None`: `t` is an `eve_runtime.evals.EvalContext`."""


@dataclass(frozen=True)
class JudgeSettings:
    """Which model grades `t.judge(...)`: a model id (`test`, `openai/gpt-4o-mini`, ...) or a `Model`.

    None means the agent's own model.
    """

    model: str | Model | None = None


@dataclass(frozen=True)
class EvalDefinition:
    """One graded case (see [`define_eval`][eve_runtime.authoring.evals.define_eval])."""

    test: EvalTest
    description: str | None = None
    judge: JudgeSettings | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timeout_ms: int | None = None


@dataclass(frozen=True)
class EvalConfig:
    """The app's eval settings (see [`define_eval_config`][eve_runtime.authoring.evals.define_eval_config])."""

    judge: JudgeSettings | None = None
    max_concurrency: int = 8
    timeout_ms: int = 120_000


def _judge(value: str | Model | Mapping[str, Any] | JudgeSettings | None, where: str) -> JudgeSettings | None:
    if value is None or isinstance(value, JudgeSettings):
        return value
    if isinstance(value, str):
        return JudgeSettings(model=value)
    if isinstance(value, Mapping):
        unknown = set(value) - {"model"}
        if unknown:
            raise DefinitionError(f"{where}: judge takes only 'model' (got {', '.join(sorted(unknown))}).")
        return JudgeSettings(model=value.get("model"))
    if isinstance(value, Model):
        return JudgeSettings(model=value)
    raise DefinitionError(f"{where}: judge is a model id, a Model, or {{'model': ...}} (got {type(value).__name__}).")


def _timeout(value: int | None, where: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise DefinitionError(f"{where}: timeout_ms is a positive number of milliseconds (got {value!r}).")
    return value


def define_eval(
    test: EvalTest,
    *,
    description: str | None = None,
    judge: str | Model | Mapping[str, Any] | JudgeSettings | None = None,
    tags: Sequence[str] = (),
    metadata: Mapping[str, Any] | None = None,
    timeout_ms: int | None = None,
) -> EvalDefinition:
    """Define one eval: put it in `evals/<name>.eval.py` as the module-level `eval`.

    ```python
    from eve_runtime import define_eval

    async def test(t):
        await t.send('/call get_weather {"city": "Paris"}')
        t.completed()
        t.called_tool("get_weather", input={"city": "Paris"})

    eval = define_eval(test, tags=["smoke"])
    ```

    Args:
        test: `async def test(t)`: drives the agent (`t.send`, `t.respond`, ...) and asserts.
        description: Shown in reports.
        judge: The model `t.judge(...)` uses here (replaces the config's).
        tags: Labels to pick evals by (`eve eval --tag`).
        metadata: Free-form data copied into the artifacts.
        timeout_ms: This eval's timeout (default: the config's, then 120 s).

    Raises:
        DefinitionError: `test` is not an async function, or an option is malformed.
    """
    if not inspect.iscoroutinefunction(test):
        raise DefinitionError("define_eval(test): test must be an `async def test(t)` function.")
    if isinstance(tags, str) or not all(isinstance(tag, str) and tag for tag in tags):
        raise DefinitionError("define_eval: tags is a list of non-empty strings.")
    return EvalDefinition(
        test=test,
        description=description,
        judge=_judge(judge, "define_eval"),
        tags=tuple(tags),
        metadata=dict(metadata or {}),
        timeout_ms=_timeout(timeout_ms, "define_eval"),
    )


def define_eval_config(
    *,
    judge: str | Model | Mapping[str, Any] | JudgeSettings | None = None,
    max_concurrency: int = 8,
    timeout_ms: int = 120_000,
) -> EvalConfig:
    """The app's eval settings, as the module-level `config` of `evals/evals_config.py`.

    Args:
        judge: The model `t.judge(...)` uses (default: the agent's model).
        max_concurrency: How many evals run at once (default 8).
        timeout_ms: Each eval's timeout unless it sets its own (default 120 s).

    Raises:
        DefinitionError: An option is malformed.
    """
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise DefinitionError(f"define_eval_config: max_concurrency is at least 1 (got {max_concurrency!r}).")
    return EvalConfig(
        judge=_judge(judge, "define_eval_config"),
        max_concurrency=max_concurrency,
        timeout_ms=_timeout(timeout_ms, "define_eval_config") or 120_000,
    )
