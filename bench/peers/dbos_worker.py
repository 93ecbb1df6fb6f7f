"""The DBOS side of `bench/peers/run.py` (runs in `.venv-peers`; see `_protocol.py`).

A turn is one durable workflow of three steps: the fake model (a tool call), the trivial
`get_weather` tool, the fake model again (one sentence). DBOS keeps no conversation of its own:
each turn's workflow records its input, its steps' outputs and its result. The system database
is a SQLite file made WAL before DBOS opens it (SQLite's default `synchronous=FULL` stays), or
Postgres with the worker's own `dbos_system_schema`. DBOS recovers an interrupted workflow by
itself at `launch`.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _protocol import ANSWER, TOOL_ARGS, TOOL_RESULT, Blocker, arguments, send, serve
from dbos import DBOS, SetWorkflowID

BLOCKER = Blocker()


@DBOS.step()
def call_model(messages: list) -> dict:
    after_tool = messages[-1]["role"] == "tool"
    if BLOCKER.on_model_call(after_tool):
        time.sleep(3600)
    if after_tool:
        return {"role": "assistant", "content": ANSWER}
    return {"role": "assistant", "tool_calls": [{"name": "get_weather", "args": dict(TOOL_ARGS)}]}


@DBOS.step()
def get_weather(city: str) -> dict:
    return dict(TOOL_RESULT, city=city)


@DBOS.workflow()
def turn_workflow(message: str) -> str:
    messages = [{"role": "user", "content": message}]
    reply = call_model(messages)
    messages.append(reply)
    result = get_weather(**reply["tool_calls"][0]["args"])
    messages.append({"role": "tool", "content": result})
    return call_model(messages)["content"]


def main() -> None:
    args = arguments()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    if args.backend == "sqlite":
        path = root / "dbos.sqlite3"
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA journal_mode = WAL")  # persistent in the file
        config = {"name": "peer-bench", "system_database_url": f"sqlite:///{path}"}
    else:
        config = {"name": "peer-bench", "system_database_url": args.url, "dbos_system_schema": args.schema}
    config["run_admin_server"] = False
    DBOS(config=config)
    DBOS.launch()  # with --resume: recovers the interrupted workflow
    ids = root / "dbos-workflow"
    if args.resume:
        DBOS.retrieve_workflow(ids.read_text()).get_result()
        send({"first_event": BLOCKER.first_call, "done": time.time()})
        DBOS.destroy()
        return

    def turn(index: int) -> None:
        turn_workflow(f"What is the weather in Paris? ({index})")

    def crash_turn() -> None:
        BLOCKER.armed = True
        workflow = f"crash-{time.time_ns()}"
        ids.write_text(workflow)
        with SetWorkflowID(workflow):
            turn_workflow("What is the weather in Paris?")

    serve(turn, crash_turn, DBOS.destroy, {"dbos_journal": _journal(args)})


def _journal(args) -> str:
    if args.backend != "sqlite":
        return "postgres"
    with sqlite3.connect(Path(args.dir) / "dbos.sqlite3") as conn:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    return f"{mode}, synchronous={sync}"


if __name__ == "__main__":
    main()
