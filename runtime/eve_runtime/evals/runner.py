"""Running evals: each `test(t)` against a target, at most `max_concurrency` at once, each within its timeout.

An eval's result is its verdict (`passed`, `failed`, `scored`, `skipped`, `error`), its assertions,
its sessions and their events, and its `t.log` lines. A test that raises ends with `error` (its
assertions so far are kept); one that runs out of time ends with `error` too, its pending
judgments cancelled.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.authoring.evals import EvalConfig, JudgeSettings
from eve_runtime.client.parts import Event
from eve_runtime.evals.assertions import Assertion, EvalStatus, verdict
from eve_runtime.evals.context import EvalSkipped, RequirementFailed, TurnFailed
from eve_runtime.evals.judge import JudgeError, run_judge
from eve_runtime.evals.t import EvalContext
from eve_runtime.evals.target import Target
from eve_runtime.models import resolve_model
from eve_runtime.models.base import Model
from eve_runtime.project.eval_loader import LoadedEval

__all__ = ["EvalResult", "Progress", "run_all"]

Progress = Callable[["EvalResult"], None]


@dataclass
class EvalResult:
    """How one eval went."""

    id: str
    status: EvalStatus
    assertions: list[Assertion]
    duration_ms: float
    description: str | None = None
    tags: tuple[str, ...] = ()
    error: str | None = None
    skip_reason: str | None = None
    session_ids: list[str] = field(default_factory=list)
    events: dict[str, list[Event]] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def failures(self) -> list[Assertion]:
        """The assertions that missed their bar."""
        return [item for item in self.assertions if not item.passed]

    def to_json(self) -> dict[str, Any]:
        """The result as `results.jsonl` holds it (events are in the per-eval files)."""
        return {
            "id": self.id,
            "status": self.status,
            "durationMs": round(self.duration_ms, 1),
            "description": self.description,
            "tags": list(self.tags),
            "sessionIds": self.session_ids,
            "assertions": [item.to_json() for item in self.assertions],
            **({"error": self.error} if self.error else {}),
            **({"skipReason": self.skip_reason} if self.skip_reason else {}),
            **({"metadata": self.metadata} if self.metadata else {}),
        }


class _Judges:
    """The judge model of each eval: its own, the config's, or the agent's; resolved once per id."""

    def __init__(self, config: EvalConfig, target: Target) -> None:
        self.config = config
        self.target = target
        self._models: dict[str, Model] = {}

    def model(self, settings: JudgeSettings | None) -> Model:
        for candidate in (settings, self.config.judge):
            if candidate is not None and candidate.model is not None:
                return self._resolve(candidate.model)
        if self.target.default_judge is None:
            raise JudgeError("no judge model: set judge= in evals/evals_config.py (the agent's model is dynamic)")
        return self._resolve(self.target.default_judge)

    def _resolve(self, model: Model | str) -> Model:
        if not isinstance(model, str):
            return model
        if model not in self._models:
            self._models[model] = resolve_model(model)
        return self._models[model]


def _where(exc: BaseException, loaded: LoadedEval) -> str:
    """` (at evals/x.eval.py:12)`: the eval file's last line the exception passed through."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == str(loaded.path)]
    return f" (at {loaded.path}:{frames[-1].lineno})" if frames else ""


async def _run_one(loaded: LoadedEval, target: Target, judges: _Judges, timeout_ms: int) -> EvalResult:
    definition = loaded.definition

    async def judge(criteria: str, state: dict[str, Any]) -> tuple[float, str]:
        return await run_judge(judges.model(definition.judge), criteria, state)

    t = EvalContext(loaded.id, target.client, judge)
    run = t.state
    error: str | None = None
    skipped: str | None = None
    started = time.monotonic()
    deadline = started + (definition.timeout_ms or timeout_ms) / 1000

    async def body() -> None:
        await definition.test(t)
        if run.judgments:
            await asyncio.gather(*run.judgments)

    try:
        await asyncio.wait_for(body(), max(0.001, deadline - time.monotonic()))
    except EvalSkipped as exc:
        skipped = str(exc) or "skipped"
    except RequirementFailed:
        pass  # its gate is recorded: the verdict says failed
    except TurnFailed as exc:
        error = str(exc)
    except TimeoutError:
        error = f"timed out after {definition.timeout_ms or timeout_ms} ms"
    except Exception as exc:  # whatever the test raises is its error, reported with where it happened
        error = f"{type(exc).__name__}: {exc}{_where(exc, loaded)}"
    finally:
        for pending in run.judgments:
            pending.cancel()
    sessions = [session for session in run.sessions if session.session_id is not None]
    return EvalResult(
        id=loaded.id,
        status=verdict(run.assertions, error=error, skipped=skipped is not None),
        assertions=run.assertions,
        duration_ms=(time.monotonic() - started) * 1000,
        description=definition.description,
        tags=definition.tags,
        error=error,
        skip_reason=skipped,
        session_ids=[session.session_id for session in sessions if session.session_id],
        events={session.session_id: session.events for session in sessions if session.session_id},
        logs=run.logs,
        metadata=dict(definition.metadata),
    )


async def run_all(
    evals: Sequence[LoadedEval],
    target: Target,
    config: EvalConfig,
    *,
    max_concurrency: int | None = None,
    timeout_ms: int | None = None,
    on_start: Callable[[str], None] | None = None,
    on_done: Progress | None = None,
) -> list[EvalResult]:
    """Run `evals` against `target`; their results in the order given.

    Args:
        evals: The evals to run.
        target: Where (see `eve_runtime.evals.target`).
        config: The app's eval config (judge, concurrency, timeout).
        max_concurrency: At most this many at once (default: the config's).
        timeout_ms: Each eval's timeout unless it sets its own (default: the config's).
        on_start: Called with an eval's id when it starts.
        on_done: Called with each result as it ends.
    """
    judges = _Judges(config, target)
    gate = asyncio.Semaphore(max_concurrency or config.max_concurrency)
    budget = timeout_ms or config.timeout_ms

    async def one(loaded: LoadedEval) -> EvalResult:
        async with gate:
            if on_start is not None:
                on_start(loaded.id)
            result = await _run_one(loaded, target, judges, budget)
            if on_done is not None:
                on_done(result)
            return result

    return list(await asyncio.gather(*(one(loaded) for loaded in evals)))
