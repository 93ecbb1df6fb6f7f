"""The tools a model call is offered: made once per agent, a new agent's own, the turn's reply tool on top."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from eve_runtime.checkpoint import TurnState
from eve_runtime.engine.conversation import REPLY_TOOL, tool_definitions
from tests.helpers import compiled, minimal_app

pytestmark = pytest.mark.parametrize("harness_store", ["memory"], indirect=True)  # no store involved

TOOL = '''
from eve_runtime import tool

@tool
def ping(host: str) -> str:
    """Check that a host answers."""
    return host
'''


def test_each_call_gets_the_agents_tools_and_a_list_of_its_own(tmp_path: Path) -> None:
    with compiled(minimal_app(tmp_path, {"agent/tools/ping.py": TOOL})) as app:
        agent = app.root
        assert agent is not None
        first = tool_definitions(agent, None)
        assert "ping" in [t.name for t in first]
        first.clear()  # a caller's list is its own
        again = tool_definitions(agent, None)
        assert [t.name for t in again] == [t.name for t in tool_definitions(agent, None)] != []
        without = dataclasses.replace(agent, tools={})  # as dynamic tools make a new agent
        assert "ping" not in [t.name for t in tool_definitions(without, None)]
        assert "ping" in [t.name for t in tool_definitions(agent, None)]


def test_a_turn_with_an_output_schema_adds_the_reply_tool(tmp_path: Path) -> None:
    with compiled(minimal_app(tmp_path, {"agent/tools/ping.py": TOOL})) as app:
        agent = app.root
        assert agent is not None
        schema = {"type": "object", "properties": {}}
        turn = TurnState(turn_id="turn_0", sequence=0, delivery_ids=[], user_index=0, output_schema=schema)
        assert [t.name for t in tool_definitions(agent, turn)][-1] == REPLY_TOOL
        assert REPLY_TOOL not in [t.name for t in tool_definitions(agent, None)]
