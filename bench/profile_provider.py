"""Where a real provider's first token waits inside eve: one process, a turn's stamps, against litellm called directly.

`bench/provider_stream.py` measures the time to first token (TTFT) through a real `eve start`
process and its HTTP stream. This script takes the HTTP out and shows where eve's part of it goes:
the template app on `openai/gpt-4o-mini`, pointed at the same local OpenAI-compatible server (a
`burst` reply of `words` words), runs in this process on a `SqliteStore` in `.eve/bench/`, and a
reader tails the session's events (`wait_for_events`, as the stream route does), so the first
delta is made durable before the model's stream is read on. Stamps (`time.perf_counter`):

- `accepted`: `Runtime.deliver` was called (a message sent to the idle session);
- `stored`: the writer thread ran the message's insert; `told`: its result reached the loop;
- `turn opened` / `turn opening done`: `start_turn`; `step's request built`: `build_request`;
- `model call`: the engine's model call began; `provider called` / `provider answered`:
  `litellm.acompletion` was called and returned its stream;
- `first text`: the first text delta was emitted; `its write taken` / `its COMMIT done`: the
  writer thread took the next write after it and committed it; `first text durable, reader
  woken`: the reader's `wait_for_events` returned after it (the stream route would now send it).

Baseline, in the same run, interleaved: `litellm.acompletion` called directly from this process
with the request eve's call of that round made (its keyword arguments, the same messages and
tools), from the call to its first text chunk. Between rounds the script sleeps a little, so
that litellm's callbacks after a call (on its own threads) are done before the next one starts.
Printed: each stamp's median time after `accepted`, the direct call's first text, and what eve
adds before the provider is called and after it answered.

Run: `.venv/bin/python bench/profile_provider.py [rounds] [words]` (default 30 rounds, 50 words).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import LocalWorld, local_world, median
from bench.profile_timeline import Recorder
from bench.provider_stream import KEY, MODEL, Process, provider_command
from eve_runtime.engine import model_call, routing, turn
from eve_runtime.models.litellm_model import _litellm
from eve_runtime.serving import event_loop
from eve_runtime.store import sqlite_ops, sqlite_writer

STAMPS = (
    "accepted",
    "stored",
    "told",
    "turn opened",
    "turn opening done",
    "step's request built",
    "model call",
    "provider called",
    "provider answered",
    "first text",
    "its write taken",
    "its COMMIT done",
    "first text durable, reader woken",
)
READ = STAMPS[-1]
PAUSE_SECONDS = 0.2


def agent_source(api_base: str) -> str:
    """The app's `agent.py`: the model at the local server, with a key of its own (no variable needed)."""
    options = {"api_base": api_base, "api_key": KEY}
    return f"from eve_runtime import define_agent\n\nagent = define_agent(model={MODEL!r}, model_options={options!r})\n"


AFTER_TEXT = ("its write taken", "its COMMIT done", READ)
"""Stamps that count only after the first text (the writer and the reader are busy before it too)."""


async def _tail(world: LocalWorld, session_id: str, recorder: Recorder) -> None:
    """Wait for the session's events as the stream route does, stamping each wake-up."""
    known = await world.store.event_count(session_id)
    while True:
        known = await world.store.wait_for_events(session_id, known, 60.0)
        recorder.mark(READ)


def _moments(stamps: list[tuple[str, int]]) -> dict[str, float]:
    """Each stamp's first time in ms after the first one; those of `AFTER_TEXT`, their first after the first text."""
    start, text = stamps[0][1], None
    moments: dict[str, float] = {}
    for name, at in stamps:
        if name in moments or (name in AFTER_TEXT and text is None):
            continue
        moments[name] = (at - start) / 1e6
        if name == "first text":
            text = at
    return moments


async def _direct(call: Any, sent: dict[str, Any]) -> float:
    """Seconds from the call to the first text chunk of the request eve `sent` (its arguments), made directly."""
    started = time.perf_counter()
    response = await call(**sent)
    first = 0.0
    async for chunk in response:
        if not first and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    return first - started


async def measure(rounds: int, words: int) -> dict[str, Any]:
    """Run one warm-up turn and `rounds` stamped turns, each beside a direct call; the medians in ms."""
    provider = Process(provider_command(words), r"port (\d+)")
    try:
        api_base = f"http://127.0.0.1:{provider.address}/v1"
        litellm = await _litellm()
        recorder = Recorder()
        async with local_world("profile-provider", agent_source=agent_source(api_base)) as world:
            session = await world.create()
            reader = asyncio.create_task(_tail(world, session, recorder))
            await world.turn(session, "burst warm-up")
            sent: dict[str, Any] = {}
            call = litellm.acompletion  # the direct calls bypass the stamps
            undo = _stamp(recorder, litellm, sent)
            traces: list[dict[str, float]] = []
            direct: list[float] = []
            try:
                for index in range(rounds):
                    await asyncio.sleep(PAUSE_SECONDS)
                    recorder.stamps = [("accepted", time.perf_counter_ns())]
                    await world.turn(session, f"burst {index}")
                    moments = _moments(recorder.stamps)
                    if "first text" not in moments:
                        raise RuntimeError("the turn streamed no text: see the log above for why its model call failed")
                    traces.append(moments)
                    await asyncio.sleep(PAUSE_SECONDS)
                    direct.append(await _direct(call, sent) * 1000)
            finally:
                for restore in reversed(undo):
                    restore()
                reader.cancel()
    finally:
        provider.close()
    seen = {name: [t[name] for t in traces if name in t] for name in STAMPS}
    medians = {name: median(values) for name, values in seen.items() if values}
    return {"rounds": rounds, "words": words, "stamps": medians, "direct_first_text_ms": median(direct)}


def _stamp(recorder: Recorder, litellm: Any, sent: dict[str, Any]) -> list[Callable[[], None]]:
    """Put the stamps of the module docstring in place (`sent` gets the last request's arguments); the undos."""
    call = litellm.acompletion

    async def keep(**kwargs: Any) -> Any:
        sent.clear()
        sent.update(kwargs)
        recorder.mark("provider called")
        try:
            return await call(**kwargs)
        finally:
            recorder.mark("provider answered")

    litellm.acompletion = keep
    return [
        lambda: setattr(litellm, "acompletion", call),
        recorder.wrap(sqlite_ops, "enqueue", None, "stored"),
        recorder.wrap(sqlite_writer.SqliteWriter, "_told", "told"),
        recorder.wrap(routing, "start_turn", "turn opened", "turn opening done"),
        recorder.wrap(turn, "build_request", None, "step's request built"),
        recorder.wrap(model_call.ModelCall, "_stream", "model call"),
        recorder.wrap(model_call, "MessageAppended", "first text"),  # the name the model call makes deltas with
        recorder.wrap(sqlite_writer.SqliteWriter, "_handle", "its write taken"),
        recorder.wrap(sqlite_writer.SqliteWriter, "_keep_wal_small", "its COMMIT done"),
    ]


def run(rounds: int = 30, words: int = 50) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures."""
    return event_loop.run(measure(rounds, words))


def report(figures: dict[str, Any]) -> None:
    stamps = figures["stamps"]
    print(
        f"where the first token waits inside eve ({figures['rounds']} turns of a {figures['words']}-word burst, "
        "in process, no HTTP; medians, ms after the message was accepted)"
    )
    for name in STAMPS:
        print(f"  {stamps[name]:8.2f}  {name}" if name in stamps else f"  {'-':>8}  {name} (not seen)")
    direct = figures["direct_first_text_ms"]
    chain = stamps["first text"] - stamps["provider called"]
    print(f"  direct litellm, call to first text: {direct:.2f} ms (through eve, the same span: {chain:.2f} ms)")
    print(
        f"  eve adds {stamps['provider called']:.2f} ms before the provider is called and "
        f"{stamps[READ] - stamps['first text']:.2f} ms from the first text until a reader may send it; "
        f"that is {stamps[READ] - direct:.2f} ms after the direct call's first text"
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    words = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    report(run(rounds, words))


if __name__ == "__main__":
    main()
