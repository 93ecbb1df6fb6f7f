"""Who a turn runs as: the principal its message names (a schedule's app principal), else the runtime's person.

A session a schedule started says so in `session.started` (`data.schedule`) and in its state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import make_harness, of_type

pytestmark = pytest.mark.anyio

WHOAMI = {
    "agent/tools/whoami.py": (
        "from eve_runtime import ToolContext\n\n\n"
        "def whoami(ctx: ToolContext) -> dict:\n"
        '    """Who runs this turn."""\n'
        '    return {"principal": ctx.session.principal_id}\n'
    )
}
APP_AUTH = {"authenticator": "app", "principalId": "eve:app", "principalType": "runtime"}
MARK = {"name": "nightly", "fireAt": "2026-01-05T09:00:00Z", "manual": False}


def _results(events: list[dict[str, object]]) -> list[object]:
    return [json.loads(e["data"]["message"].split(" -> ", 1)[1]) for e in of_type(events, "message.completed")]


async def test_a_turn_whose_message_names_the_app_principal_runs_as_it(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, WHOAMI)
    sid = await h.create("/call whoami {}", mode="task", auth=APP_AUTH, schedule=MARK)
    events = await h.turns(sid, 1)
    assert _results(events) == [{"principal": "eve:app"}]
    started = of_type(events, "session.started")[0]["data"]
    assert started["schedule"] == MARK
    checkpoint = await h.store.load_checkpoint(sid)
    assert checkpoint is not None and json.loads(checkpoint)["schedule"] == "nightly"
    await h.stop()


async def test_the_next_turn_without_auth_runs_as_the_runtimes_person(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, WHOAMI)
    sid = await h.create("/call whoami {}", auth=APP_AUTH)
    await h.turns(sid, 1)
    await h.send(sid, "/call whoami {}")
    events = await h.turns(sid, 2)
    assert _results(events) == [{"principal": "eve:app"}, {"principal": "token"}]
    assert "schedule" not in of_type(events, "session.started")[0]["data"]
    await h.stop()
