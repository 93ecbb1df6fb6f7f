"""Per-turn inputs and instructions: client context, output schema, static and dynamic instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_runtime.messages import Message, SystemMessage, UserMessage
from eve_runtime.models import FunctionInfo, FunctionModel, TestModel
from eve_runtime.models.base import ModelRequest
from tests.harness import Harness, last_reply, make_harness, of_type, types

pytestmark = pytest.mark.anyio


class Recording(TestModel):
    """The test model, remembering every request."""

    def __init__(self) -> None:
        super().__init__("test")
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        return super().stream(request)


def contents(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages if isinstance(m, (SystemMessage, UserMessage))]


async def test_client_context_reaches_the_model_but_not_history(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, models={"test": model})
    sid = await h.create("hello", clientContext=["selection: jazz", "page: home"])
    await h.turns(sid, 1)
    await h.send(sid, "again", clientContext={"a": 1})
    await h.turns(sid, 2)
    await h.stop()
    first, second = model.requests
    assert contents(list(first.messages))[-3:] == [
        ("user", "Client context:\nselection: jazz"),
        ("user", "Client context:\npage: home"),
        ("user", "hello"),
    ]
    assert contents(list(second.messages))[-3:] == [
        ("user", "hello"),
        ("user", 'Client context:\n{"a":1}'),
        ("user", "again"),
    ]


async def test_output_schema_through_eve_reply(harness: Harness) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    sid = await harness.create('/json {"answer": 42}', outputSchema=schema)
    events = await harness.turns(sid, 1)
    compact = [t for t in types(events) if t != "message.appended"]
    assert compact[-5:] == ["step.started", "step.completed", "result.completed", "turn.completed", "session.waiting"]
    assert of_type(events, "result.completed")[0]["data"]["result"] == {"answer": 42}
    assert "actions.requested" not in types(events) and "action.input.appended" not in types(events)
    # the schema belongs to that turn only
    await harness.send(sid, "plain")
    events = await harness.turns(sid, 2)
    assert last_reply(events) == "echo: plain" and types(events)[-2] == "turn.completed"


async def test_output_schema_not_fulfilled(harness: Harness) -> None:
    sid = await harness.create("just text", outputSchema={"type": "object"})
    events = await harness.turns(sid, 1)
    assert types(events)[-5:] == [
        "message.completed",
        "step.completed",
        "step.failed",
        "turn.failed",
        "session.waiting",
    ]
    failed = of_type(events, "turn.failed")[0]["data"]
    assert failed["code"] == "OUTPUT_SCHEMA_NOT_FULFILLED" and failed["terminal"] is False


DYNAMIC = {
    "agent/instructions/later.md": "Answer briefly.\n",
    "agent/instructions/user_note.py": (
        "from eve_runtime import define_instructions\n\n"
        "note = define_instructions('The user prefers metric units.', role='user')\n"
    ),
    "agent/instructions/today.py": (
        "from eve_runtime import define_dynamic, define_instructions\n\n"
        "calls = []\n"
        "def on_session(ctx):\n"
        "    calls.append(('session', ctx.session_id))\n"
        "    return define_instructions(f'Session {ctx.session_id[:5]}.')\n"
        "def on_turn(ctx):\n"
        "    calls.append(('turn', ctx.turn_id))\n"
        "    return f'Turn {ctx.turn_id}.'\n"
        "today = define_dynamic({'session.started': on_session, 'turn.started': on_turn})\n"
    ),
}


async def test_static_and_dynamic_instructions_on_every_call(tmp_path: Path) -> None:
    model = Recording()
    h = await make_harness(tmp_path, DYNAMIC, models={"test": model})
    sid = await h.create('/call get_weather {"city":"Paris"}')
    await h.turns(sid, 1)
    await h.send(sid, "again")
    await h.turns(sid, 2)
    await h.stop()
    assert len(model.requests) == 3
    for index, request in enumerate(model.requests):
        messages = contents(list(request.messages))
        turn = "turn_0" if index < 2 else "turn_1"
        assert messages[:4] == [
            ("system", "You are a test agent.\n"),
            ("system", "Answer briefly.\n"),
            ("system", "Session wrun_."),
            ("system", f"Turn {turn}."),
        ]
        assert messages[4] == ("user", "The user prefers metric units.")  # user-role static: opens history
    assert [m for m in contents(list(model.requests[2].messages)) if m[1] == "The user prefers metric units."] == [
        ("user", "The user prefers metric units.")
    ]


async def test_a_failing_resolver_fails_the_turn(tmp_path: Path) -> None:
    broken = {
        "agent/instructions/broken.py": (
            "from eve_runtime import define_dynamic\n\nbroken = define_dynamic({'turn.started': lambda ctx: 1 / 0})\n"
        )
    }
    h = await make_harness(tmp_path, broken)
    sid = await h.create("hi")
    events = await h.turns(sid, 1)
    await h.stop()
    assert types(events)[-2:] == ["turn.failed", "session.waiting"]
    assert of_type(events, "turn.failed")[0]["data"]["code"] == "DYNAMIC_RESOLVER_FAILED"


async def test_function_model_sees_the_agents_tools_then_the_delegation_tools(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def respond(messages: list[Message], info: FunctionInfo) -> str:
        seen.append([t.name for t in info.tools])
        return "ok"

    h = await make_harness(tmp_path, models={"test": FunctionModel(respond)})
    sid = await h.create("hi")
    await h.turns(sid, 1)
    await h.stop()
    # like eve: the authored tools, the default framework tools, then delegation to a copy of itself
    # (the root agent may delegate to it, so the task tools come along)
    framework = ["bash", "read_file", "write_file", "web_fetch"]
    assert seen == [["get_weather", *framework, "agent", "eve__task_wait", "eve__task_cancel"]]
