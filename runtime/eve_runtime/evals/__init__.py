"""`eve eval`: graded cases in `evals/**/*.eval.py`, run against the app in process or a server.

```python
from eve_runtime import define_eval
from eve_runtime.evals import includes

async def test(t):
    await t.send('/call get_weather {"city": "Paris"}')
    t.completed()
    t.called_tool("get_weather", input={"city": "Paris"})
    t.check(t.reply, includes("Paris"))

eval = define_eval(test)
```

[`run_evals`][eve_runtime.evals.run_evals] is the entry point `eve eval` calls: discover, load,
pick by id or prefix (and tags), run against a target, write the artifacts and the JUnit file.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eve_runtime.authoring.evals import EvalConfig, EvalDefinition, JudgeSettings, define_eval, define_eval_config
from eve_runtime.evals.assertions import Assertion, EvalStatus
from eve_runtime.evals.context import EvalSession, EvalTurn
from eve_runtime.evals.expect import Check, equals, includes, matches, satisfies, similarity
from eve_runtime.evals.reports import artifacts_dir, failed, summary, write_artifacts, write_junit
from eve_runtime.evals.runner import EvalResult, run_all
from eve_runtime.evals.t import EvalContext
from eve_runtime.evals.target import AUTH_TOKEN_ENV, Target, TargetUnavailable, local_target, remote_target
from eve_runtime.project.eval_discovery import EvalConfigError, discover_evals, select_ids
from eve_runtime.project.eval_loader import EvalLoadError, LoadedEval, load_config, load_evals

__all__ = [
    "AUTH_TOKEN_ENV",
    "Assertion",
    "Check",
    "EvalConfig",
    "EvalConfigError",
    "EvalContext",
    "EvalDefinition",
    "EvalLoadError",
    "EvalResult",
    "EvalRun",
    "EvalRunOptions",
    "EvalSession",
    "EvalStatus",
    "EvalTurn",
    "JudgeSettings",
    "LoadedEval",
    "TargetUnavailable",
    "define_eval",
    "define_eval_config",
    "equals",
    "includes",
    "list_evals",
    "matches",
    "run_evals",
    "satisfies",
    "similarity",
]


@dataclass(frozen=True)
class EvalRunOptions:
    """What `eve eval` was asked to do."""

    app_root: Path
    selectors: Sequence[str] = ()
    """Ids or directory prefixes (none: every eval)."""
    url: str | None = None
    """A running server to target instead of the app in this process."""
    token: str | None = None
    """The server's bearer token (default: `EVE_EVAL_AUTH_TOKEN`)."""
    tags: Sequence[str] = ()
    exclude_tags: Sequence[str] = ()
    strict: bool = False
    """Soft assertions below their threshold fail the run too."""
    max_concurrency: int | None = None
    timeout_ms: int | None = None
    junit: Path | None = None


@dataclass(frozen=True)
class EvalRun:
    """A finished run: the results, where the artifacts are, and whether it passed."""

    results: list[EvalResult]
    artifacts: Path
    junit: Path | None
    target: str
    strict: bool

    @property
    def ok(self) -> bool:
        """No eval failed or errored (nor, under `--strict`, scored below a bar)."""
        return not any(failed(result, strict=self.strict) for result in self.results)


def list_evals(options: EvalRunOptions) -> tuple[EvalConfig, list[LoadedEval]]:
    """The config and the evals the options pick, loaded (nothing runs).

    Raises:
        EvalConfigError: No `evals/` or config, or a selector that picks nothing.
        EvalLoadError: A file failed to load.
    """
    sources = discover_evals(options.app_root)
    config = load_config(sources)
    loaded = {item.id: item for item in load_evals(sources)}
    picked = [loaded[eval_id] for eval_id in select_ids(loaded, options.selectors)]
    if options.tags:
        picked = [item for item in picked if set(item.definition.tags) & set(options.tags)]
    if options.exclude_tags:
        picked = [item for item in picked if not set(item.definition.tags) & set(options.exclude_tags)]
    return config, picked


@contextlib.asynccontextmanager
async def _target(options: EvalRunOptions) -> AsyncIterator[Target]:
    if options.url:
        async with remote_target(options.url, token=options.token) as target:
            yield target
    else:
        async with local_target(options.app_root) as target:
            yield target


async def run_evals(
    options: EvalRunOptions,
    *,
    on_run_start: Callable[[list[LoadedEval]], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    on_done: Callable[[EvalResult], None] | None = None,
) -> EvalRun:
    """Discover, pick, run, and report the app's evals.

    Raises:
        EvalConfigError: The evals are not laid out right, or a selector picks nothing.
        EvalLoadError: An eval file or the config failed to load.
        TargetUnavailable: Nowhere to run them (see `eve_runtime.evals.target`).
    """
    config, picked = list_evals(options)
    started = time.time()
    if on_run_start is not None:
        on_run_start(picked)
    async with _target(options) as target:
        results = await run_all(
            picked,
            target,
            config,
            max_concurrency=options.max_concurrency,
            timeout_ms=options.timeout_ms,
            on_start=on_start,
            on_done=on_done,
        )
        where = target.url if target.kind == "remote" else "local"
    document = summary(results, target=where, started=started, strict=options.strict)
    directory = write_artifacts(artifacts_dir(options.app_root / ".eve", started), results, document)
    junit = write_junit(options.junit, results, strict=options.strict) if options.junit else None
    return EvalRun(results, directory, junit, where, options.strict)
