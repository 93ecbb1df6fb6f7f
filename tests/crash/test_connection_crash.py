"""kill -9 an `eve start` process during an MCP call; restart: the call is reported, never sent again.

The connection is a streamable-HTTP MCP server in its own process (the FastMCP fixture), so it
outlives the eve process and counts every `tools/call` it receives in a log file. Killed while
the server works on the call (its `actions.requested` is durable, its result is not), the
restarted eve does not send the call again (one line in the log), closes it once as abandoned
(`ACTION_ABANDONED`), and tells the model the call was interrupted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.connections.servers import McpHttpServer
from tests.crash.harness import Client, EveProcess, check, scaffold
from tests.crash.test_subagent_crash import events_offline, of_type, step_attempts, wait_until

pytestmark = pytest.mark.scenario

CONNECTION = """from eve_runtime import define_mcp_client_connection

web = define_mcp_client_connection(url={url!r}, description="The test server over HTTP.")
"""


def test_a_kill_during_an_mcp_call_is_reported_not_sent_again(tmp_path: Path) -> None:
    calls = tmp_path / "mcp-calls.log"
    mcp = McpHttpServer(tmp_path, call_log=calls)
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        mcp.start()
        (app / "agent" / "connections").mkdir(exist_ok=True)
        (app / "agent" / "connections" / "web.py").write_text(CONNECTION.format(url=mcp.url))
        server.start()
        message = "/call web__record " + json.dumps({"text": "charge-card", "seconds": 5})
        created = client.create("op-mcp", message)
        assert created.session is not None
        session = created.session
        wait_until(client, session, lambda events: bool(of_type(events, "actions.requested")), "the call started")
        deadline = time.monotonic() + 20
        while not (calls.exists() and calls.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert calls.read_text() == "charge-card\n"  # the server received the call
        server.kill()
        assert of_type(events_offline(app, session), "action.result") == []  # killed before its result
        server.start()
        events = client.wait_quiet(session, turns=1, timeout=30)
        time.sleep(0.5)
        assert calls.read_text() == "charge-card\n"  # never sent again
        assert len(of_type(events, "actions.requested")) == 1
        (closed,) = of_type(events, "action.result")  # closed once, as abandoned, by the recovery
        assert closed["data"]["status"] == "failed" and closed["data"]["error"]["code"] == "ACTION_ABANDONED"
        assert step_attempts(events, 0) == 2
        reply = [e for e in of_type(events, "message.completed") if e["data"]["finishReason"] != "tool-calls"]
        assert "was not run again" in reply[-1]["data"]["message"], reply
        ledger.touch()
        report = check(client, [session], ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()
        mcp.kill()
