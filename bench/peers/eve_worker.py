"""The eve side of `bench/peers/run.py`: the template app with a fake model, over eve's own store.

The worker runs in the repository's `.venv` (see `_protocol.py` for the commands). The app is
the default template (its `get_weather` tool is the trivial tool) with the `test` model id bound to
a `FunctionModel` that answers like every peer's fake model. The store is a `SqliteStore` (the
local world, WAL with `synchronous=FULL`) or a `PostgresStore` in the worker's own schema with
leases on, as `eve start --world postgres` runs it. A turn is timed from `Runtime.deliver` until
its `session.waiting` commit is durable.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._common import BOUNDARIES, compile_template
from bench.peers._protocol import ANSWER, TOOL_ARGS, Blocker, arguments, send, serve
from eve_runtime.messages import Message, ToolCall, ToolMessage
from eve_runtime.models.function import FunctionInfo, FunctionModel
from eve_runtime.serving import event_loop
from eve_runtime.sessions.runtime import Runtime, RuntimeOptions
from eve_runtime.store.base import Commit, Store

BLOCKER = Blocker()


async def fake_model(messages: list[Message], info: FunctionInfo) -> str | ToolCall:
    """A tool call for a user message, one sentence for the tool's result (blocking when armed)."""
    after_tool = isinstance(messages[-1], ToolMessage)
    if BLOCKER.on_model_call(after_tool):
        await asyncio.sleep(3600)
    if after_tool:
        return ANSWER
    return ToolCall(id=f"call_{info.call_count}", name="get_weather", arguments=dict(TOOL_ARGS))


def watched(base: type[Store]) -> Any:
    """`base` with a way to await a session's durable turn boundaries."""

    class Watched(base):  # type: ignore[valid-type,misc]
        boundaries: dict[str, int]
        changed: asyncio.Event

        async def commit(self, session_id: str, commit: Commit) -> None:
            await super().commit(session_id, commit)
            added = sum(1 for row in commit.events if row.type in BOUNDARIES)
            if added:
                self.boundaries[session_id] = self.boundaries.get(session_id, 0) + added
                self.changed.set()

        async def wait_boundaries(self, session_id: str, count: int) -> None:
            while self.boundaries.get(session_id, 0) < count:
                self.changed.clear()
                await asyncio.wait_for(self.changed.wait(), 3600)

    return Watched


def open_store(args: Any) -> Any:
    if args.backend == "sqlite":
        from eve_runtime.store.sqlite import SqliteStore

        store = watched(SqliteStore)(Path(args.dir) / "workflow-data")
    else:
        from eve_runtime.store.postgres import PostgresStore

        store = watched(PostgresStore)(args.url, schema=args.schema)
    store.boundaries = {}
    store.changed = asyncio.Event()
    return store


def main() -> None:
    args = arguments()
    loop = event_loop.loop_factory()()  # the loop eve serves on
    asyncio.set_event_loop(loop)
    root = Path(args.dir)
    app_root = root / "eve"
    app_root.mkdir(parents=True, exist_ok=True)
    app = compile_template(app_root) if not (app_root / "app").exists() else None
    if app is None:
        from eve_runtime.project.compiler import compile_app

        app = compile_app(app_root / "app", write=False)
    assert app.root is not None
    store = open_store(args)
    loop.run_until_complete(store.open())
    options = RuntimeOptions(lease_seconds=15.0) if args.backend == "postgres" else None
    runtime = Runtime(app.root, store, options=options, models={"test": FunctionModel(fake_model)})
    session_file = root / "eve-session"
    if args.resume:
        session_id = session_file.read_text()
        loop.run_until_complete(runtime.start())  # recovers the interrupted turn
        loop.run_until_complete(store.wait_boundaries(session_id, 1))
        send({"first_event": BLOCKER.first_call, "done": __import__("time").time()})
        loop.run_until_complete(runtime.stop(deadline=5.0))
        loop.run_until_complete(store.close())
        return
    loop.run_until_complete(runtime.start())
    session_id = loop.run_until_complete(runtime.create_session()).id
    session_file.write_text(session_id)
    turns = 0

    async def turn(message: str) -> None:
        nonlocal turns
        await runtime.deliver(session_id, "message", {"message": message})
        turns += 1
        await store.wait_boundaries(session_id, turns)

    def crash_turn() -> None:
        BLOCKER.armed = True
        loop.run_until_complete(turn("What is the weather in Paris?"))

    def close() -> None:
        loop.run_until_complete(runtime.stop(deadline=5.0))
        loop.run_until_complete(store.close())
        app.loader.release()

    serve(lambda i: loop.run_until_complete(turn(f"What is the weather in Paris? ({i})")), crash_turn, close, {})


if __name__ == "__main__":
    main()
