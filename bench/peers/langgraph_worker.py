"""The LangGraph side of `bench/peers/run.py` (runs in `.venv-peers`; see `_protocol.py`).

A `StateGraph` over `MessagesState`: a `model` node calling a fake chat model
(`GenericFakeChatModel`, answering like every peer's), the prebuilt `ToolNode` with the trivial
`get_weather` tool, `tools_condition` between them: a turn is model -> tool -> model, one
`invoke` on one thread. The checkpointer is `SqliteSaver` on a `sqlite3` connection in WAL mode
with `synchronous=FULL`, or `PostgresSaver` on a psycopg connection whose `search_path` is the
worker's own schema. LangGraph does not resume a thread by itself after a crash: the app calls
`invoke(None, config)` on it, which the `--resume` worker does at once.
"""

from __future__ import annotations

import sqlite3
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _protocol import ANSWER, TOOL_ARGS, TOOL_RESULT, Blocker, arguments, send, serve
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

BLOCKER = Blocker()


@tool
def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return dict(TOOL_RESULT, city=city)


def replies() -> Iterator[AIMessage]:
    while True:
        call = {"name": "get_weather", "args": dict(TOOL_ARGS), "id": f"call_{uuid.uuid4().hex[:12]}"}
        yield AIMessage(content="", tool_calls=[call])
        yield AIMessage(content=ANSWER)


LLM = GenericFakeChatModel(messages=replies())


def model(state: MessagesState) -> dict:
    after_tool = isinstance(state["messages"][-1], ToolMessage)
    if BLOCKER.on_model_call(after_tool):
        time.sleep(3600)
    return {"messages": [LLM.invoke(state["messages"])]}


def build(checkpointer):
    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([get_weather]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


def saver(args):
    if args.backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(str(Path(args.dir) / "langgraph.sqlite3"), check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        checkpointer = SqliteSaver(conn)
    else:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        with psycopg.connect(args.url, autocommit=True) as admin:
            admin.execute(f'CREATE SCHEMA IF NOT EXISTS "{args.schema}"')
        conn = psycopg.connect(
            args.url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            options=f"-c search_path={args.schema}",
        )
        checkpointer = PostgresSaver(conn)
    checkpointer.setup()
    return checkpointer, conn


def main() -> None:
    args = arguments()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    checkpointer, conn = saver(args)
    graph = build(checkpointer)
    config = {"configurable": {"thread_id": "bench-thread"}}
    if args.resume:
        graph.invoke(None, config)  # the interrupted turn, from its last checkpoint
        send({"first_event": BLOCKER.first_call, "done": time.time()})
        conn.close()
        return

    def turn(index: int) -> None:
        graph.invoke({"messages": [("user", f"What is the weather in Paris? ({index})")]}, config)

    def crash_turn() -> None:
        BLOCKER.armed = True
        turn(-1)

    serve(turn, crash_turn, conn.close, {"langgraph_checkpoint": type(checkpointer).__name__})


if __name__ == "__main__":
    main()
