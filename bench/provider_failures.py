"""How long a turn takes to fail when the provider cannot be used: a missing key, an unreachable URL.

Measured: one turn per case on the template app over the local world (`bench/_common.py`), with
the production `RuntimeOptions` (its real retry delays), timed from `Runtime.deliver` until the
turn's `session.waiting` is durable. Nothing leaves the machine:

- `missing key (openai)` and `missing key (anthropic)`: `openai/gpt-4o-mini` and
  `anthropic/claude-3-5-haiku-latest` with their key variables removed from the environment;
- `unreachable URL`: `openai/gpt-4o-mini` with a fake key and
  `model_options={"api_base": "http://127.0.0.1:<closed port>/v1"}` (connection refused).

Baseline, in the same run: an echo turn on the offline `test` model. The first case runs before
anything imported litellm, as a newcomer's first turn does (`missing key, first turn`); then
litellm is imported (its time reported on its own line) and every other case runs warm. Each
line also shows the turn's failure code and its message, cut short.

Run: `.venv/bin/python bench/provider_failures.py [rounds]`
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import local_world, median
from eve_runtime.serving import event_loop

_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed once the probe is: connecting is refused


def _agent(model: str, options: dict[str, Any] | None = None) -> str:
    extra = f", model_options={options!r}" if options else ""
    return f'from eve_runtime import define_agent\n\nagent = define_agent(model="{model}"{extra})\n'


async def _case(agent_source: str, env: dict[str, str], rounds: int) -> dict[str, Any]:
    saved = {key: os.environ.pop(key) for key in _KEYS if key in os.environ}
    os.environ.update(env)
    try:
        async with local_world("provider-failures", agent_source=agent_source) as world:
            seconds: list[float] = []
            failure: dict[str, Any] = {}
            for index in range(rounds):
                session = await world.create()
                started = time.perf_counter()
                await world.turn(session, f"hello {index}", timeout=300.0)
                seconds.append(time.perf_counter() - started)
                lines = [json.loads(row.line) for row in await world.store.read_events(session, 0)]
                failed = [event["data"] for event in lines if event["type"] == "turn.failed"]
                failure = failed[-1] if failed else {}
            return {"seconds": median(seconds), "code": failure.get("code"), "message": failure.get("message", "")}
    finally:
        for key in env:
            os.environ.pop(key, None)
        os.environ.update(saved)


async def measure(rounds: int) -> dict[str, Any]:
    """Time one turn of each case (median of `rounds`): the first before litellm is imported, the rest after."""
    from eve_runtime.models.litellm_model import _litellm

    cold = {"missing key (openai), first turn": await _case(_agent("openai/gpt-4o-mini"), {}, 1)}
    started = time.perf_counter()
    await _litellm()
    figures: dict[str, Any] = {"litellm_import_s": time.perf_counter() - started, "rounds": rounds}
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    cases = {
        "echo turn (test model, baseline)": (_agent("test"), {}),
        "missing key (openai)": (_agent("openai/gpt-4o-mini"), {}),
        "missing key (anthropic)": (_agent("anthropic/claude-3-5-haiku-latest"), {}),
        "unreachable URL": (_agent("openai/gpt-4o-mini", {"api_base": url}), {"OPENAI_API_KEY": "sk-bench-not-a-key"}),
    }
    figures["cases"] = cold | {name: await _case(source, env, rounds) for name, (source, env) in cases.items()}
    return figures


def run(rounds: int = 1) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(rounds))


def report(figures: dict[str, Any]) -> None:
    print(f"provider failures: seconds from message to turn end (median of {figures['rounds']})")
    print(f"  (litellm import after the first case: {figures['litellm_import_s']:.2f} s)")
    for name, case in figures["cases"].items():
        message = " ".join(str(case["message"]).split())[:110]
        outcome = f"{case['code']}: {message}" if case["code"] else "completed"
        print(f"  {name:<34} {case['seconds']:7.2f} s  {outcome}")


def main() -> None:
    logging.getLogger("eve").setLevel(logging.ERROR)  # each failed turn logs a warning: the report says it all
    report(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1))


if __name__ == "__main__":
    main()
