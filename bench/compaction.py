"""Compaction: a 2,000-turn session keeps a bounded model context and a bounded recovery time.

Measured: one session of the template app on the offline `test` model over a `SqliteStore` in
`.eve/bench/`, its agent given a small context window (`model_context_window_tokens`, default
threshold 0.9) so that automatic compaction runs every few turns. Each turn's message carries a
sentence of new words; the `test` model echoes it.

- *model context*: the input tokens of each turn's model call (`step.completed.usage`; the `test`
  model counts the words of everything sent: instructions, history, the message);
- *recovery read*: what restarting the session would read before it can continue, timed after
  each turn of the two windows: the checkpoint, the history log (parsed into messages), the event
  count, and the events after the checkpoint;
- for information, the context the last turn would have had without compaction (every message
  ever sent, summed), and the number of compactions.

Target: bounded. The last 100 turns cost no more than the first 100 (median ratio <= 1.5 for both
figures), and no model call's context exceeds the window. The baseline is the session's own
first 100 turns, in the same run.

Run: `.venv/bin/python bench/compaction.py [turns]`
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import local_world, median, verdict
from eve_runtime.checkpoint import SessionState
from eve_runtime.messages import MessageAdapter
from eve_runtime.models.token_count import count_words
from eve_runtime.serving import event_loop
from eve_runtime.store.base import Store

TARGET_RATIO = 1.5
WINDOW_TOKENS = 3000
AGENT = (
    "from eve_runtime import define_agent\n\n"
    f"agent = define_agent(model='test', model_context_window_tokens={WINDOW_TOKENS})\n"
)


def message_for(turn: int) -> str:
    """A sentence of words the session has not seen before (about 24 words)."""
    return " ".join(f"t{turn}w{i}" for i in range(24))


async def recovery_read(store: Store, session_id: str) -> float:
    """Seconds to read what a restart reads to continue the session (see the module docstring)."""
    started = time.perf_counter()
    raw = await store.load_checkpoint(session_id)
    assert raw is not None
    state = SessionState.model_validate_json(raw)
    stored = await store.load_history(session_id)
    MessageAdapter.validate_json("[" + ",".join(stored) + "]")
    count = await store.event_count(session_id)
    if count > state.event_count:
        await store.read_events(session_id, state.event_count)
    return time.perf_counter() - started


async def measure(turns: int, window: int) -> dict[str, Any]:
    if turns < 2 * window:
        raise ValueError(f"turns must be at least twice the window ({2 * window}), got {turns}")
    async with local_world("compaction", agent_source=AGENT) as world:
        session = await world.create()
        recovery: dict[int, float] = {}
        started = time.perf_counter()
        for turn in range(turns):
            await world.turn(session, message_for(turn), timeout=60.0)
            if turn < window or turn >= turns - window:
                recovery[turn] = await recovery_read(world.store, session)
        elapsed = time.perf_counter() - started
        rows = await world.store.read_events(session)
        history = len(await world.store.load_history(session))
        failures = world.store.failures
    context: list[int] = []
    compactions = 0
    for row in rows:
        if row.type == "step.completed":
            context.append(int(json.loads(row.line)["data"]["usage"]["inputTokens"]))
        elif row.type == "compaction.completed":
            compactions += 1
    uncompacted = sum(count_words(message_for(t)) * 2 + 1 for t in range(turns))  # each message and its echo
    first = [recovery[t] for t in range(window)]
    last = [recovery[t] for t in range(turns - window, turns)]
    return {
        "turns": turns,
        "window": window,
        "window_tokens": WINDOW_TOKENS,
        "turns_completed": len(context),
        "failed_turns": failures,
        "compactions": compactions,
        "context_first": median(context[:window]),
        "context_last": median(context[-window:]),
        "context_max_first": max(context[:window]),
        "context_max_last": max(context[-window:]),
        "uncompacted_tokens": uncompacted,
        "recovery_ms_first": median(first) * 1000,
        "recovery_ms_last": median(last) * 1000,
        "history_messages": history,
        "events": len(rows),
        "seconds": elapsed,
    }


def run(turns: int = 2000, window: int = 100) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(turns, window))


def report(figures: dict[str, Any]) -> None:
    window = figures["window"]
    print(
        f"compaction over one {figures['turns']}-turn session (window {figures['window_tokens']} tokens; target: "
        f"the last {window} turns cost no more than the first {window}, ratio <= {TARGET_RATIO})"
    )
    print(f"  {'':<36} {'first ' + str(window):>11} {'last ' + str(window):>11}  {'last/first':>10}")
    rows = [
        ("model context, median (tokens)", figures["context_first"], figures["context_last"], "", 1),
        ("recovery read, median (ms)", figures["recovery_ms_first"], figures["recovery_ms_last"], "", 3),
    ]
    for label, first, last, _unit, digits in rows:
        ratio = last / first
        print(
            f"  {label:<36} {first:11.{digits}f} {last:11.{digits}f}  {ratio:9.2f}x  {verdict(ratio <= TARGET_RATIO)}"
        )
    bounded = figures["context_max_last"] <= figures["window_tokens"]
    print(
        f"  model context, max (tokens)          {figures['context_max_first']:11d} {figures['context_max_last']:11d}"
        f"  {'':>10}  {verdict(bounded)} (window {figures['window_tokens']})"
    )
    print(
        f"  without compaction the last call would read about {figures['uncompacted_tokens']:,} tokens; "
        f"{figures['compactions']} compactions ran"
    )
    print(
        f"  end: {figures['history_messages']} history messages, {figures['events']:,} events, "
        f"{figures['turns_completed']}/{figures['turns']} turns ended, {figures['failed_turns']} failed, "
        f"{figures['seconds']:.1f}s"
    )


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    report(run(turns))


if __name__ == "__main__":
    main()
