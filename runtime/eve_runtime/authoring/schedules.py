"""`define_schedule`: prompts or code run on a cron schedule (`agent/schedules/**`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from eve_runtime.errors import DefinitionError

__all__ = ["Schedule", "cron_problem", "define_schedule"]


@dataclass(frozen=True)
class Schedule:
    """A schedule: a 5-field cron expression (UTC) and either a prompt or a handler."""

    cron: str
    markdown: str | None = None
    """The prompt of a task-mode run."""
    run: Callable[..., Any] | None = None
    """A handler that sends through a channel target."""


def cron_problem(expression: object) -> str | None:
    """Why `expression` is not a 5-field cron expression, or None when it is one."""
    from cronsim import CronSim, CronSimError

    if not isinstance(expression, str) or not expression.strip():
        return "'cron' must be a non-empty string such as '0 14 * * 1'"
    if len(expression.split()) != 5:
        return f"cron {expression!r} must have 5 fields (minute hour day-of-month month day-of-week)"
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as exc:
        return f"cron {expression!r} is invalid: {exc}"
    return None


def define_schedule(*, cron: str, markdown: str | None = None, run: Callable[..., Any] | None = None) -> Schedule:
    """Define a schedule in code (`agent/schedules/<name>.py`). Give exactly one of `markdown` or `run`.

    Args:
        cron: 5-field cron expression, minute granularity, evaluated in UTC.
        markdown: A prompt run in task mode (to completion, no human input, output dropped).
        run: A handler run on each tick.
    """
    problem = cron_problem(cron)
    if problem is not None:
        raise DefinitionError(f"define_schedule(): {problem}", field="cron")
    if (markdown is None) == (run is None):
        raise DefinitionError("define_schedule(): give exactly one of 'markdown' or 'run'", field="markdown")
    if markdown is not None and (not isinstance(markdown, str) or not markdown.strip()):
        raise DefinitionError("define_schedule(): 'markdown' must be a non-empty prompt", field="markdown")
    if run is not None and not callable(run):
        raise DefinitionError("define_schedule(): 'run' must be a function", field="run")
    return Schedule(cron=cron, markdown=markdown, run=run)
