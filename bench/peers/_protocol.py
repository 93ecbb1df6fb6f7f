"""The line protocol between `bench/peers/run.py` and each framework's worker process (stdlib only).

A worker sets its framework up over one store, prints `{"ready": ...}` and then answers one JSON
command per stdin line with one JSON line on stdout:

- `{"op": "turns", "n": N}`: run N turns (model -> tool -> model) one after the other on the
  worker's one thread/session; answers `{"turn_s": [seconds of each turn]}`;
- `{"op": "crash_turn"}`: start a turn whose second model call blocks forever, and answer
  `{"blocked": true}` once it blocks (the runner then kills the process with SIGKILL);
- `{"op": "quit"}`: close the framework and its store cleanly, answer `{"closed": true}`, exit.

Started with `--resume`, a worker instead finishes the turn a killed worker left over the same
store, and prints `{"first_event": t, "done": t}`: the wall-clock times (`time.time()`) of the
first call into the fake model in this process, and of the resumed turn's end.

Every worker's fake model answers a user message with one call of the tool `get_weather` and the
tool's result with one sentence; the tool returns a small dict. Both cost next to nothing, so what
is measured is each framework's own work (and its store's).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

TOOL_ARGS = {"city": "Paris"}
TOOL_RESULT = {"city": "Paris", "condition": "Sunny", "temperatureF": 72}
ANSWER = "It is sunny in Paris, 72F."


def arguments() -> argparse.Namespace:
    """The worker's command line: the backend and where its store lives."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=("sqlite", "postgres"), required=True)
    parser.add_argument("--dir", required=True, help="scratch directory (the SQLite file, the app)")
    parser.add_argument("--url", default="", help="the Postgres URL")
    parser.add_argument("--schema", default="", help="the Postgres schema of this worker")
    parser.add_argument("--resume", action="store_true", help="finish the turn a killed worker left")
    return parser.parse_args()


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class Blocker:
    """Makes the second model call of a crash turn block forever (after telling the runner)."""

    def __init__(self) -> None:
        self.armed = False
        self.first_call: float | None = None

    def on_model_call(self, after_tool: bool) -> bool:
        """Record the call; whether it must block (the runner kills the process then)."""
        if self.first_call is None:
            self.first_call = time.time()
        if self.armed and after_tool:
            send({"blocked": True})
            return True
        return False


def serve(
    turn: Callable[[int], None], crash_turn: Callable[[], None], close: Callable[[], None], ready: dict[str, Any]
) -> None:
    """Answer the runner's commands until `quit` (or stdin closes)."""
    send({"ready": ready})
    count = 0
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "turns":
            times = []
            for _ in range(int(command["n"])):
                started = time.perf_counter()
                turn(count)
                times.append(time.perf_counter() - started)
                count += 1
            send({"turn_s": times})
        elif op == "crash_turn":
            crash_turn()  # blocks: the runner kills the process
        elif op == "quit":
            break
        else:
            send({"error": f"unknown op {op!r}"})
    close()
    send({"closed": True})
