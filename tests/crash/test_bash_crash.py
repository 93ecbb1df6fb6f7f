"""kill -9 an `eve start` process while a `bash` call runs; restart: the call is reported, never run again.

The command appends `started` to a file in its workspace, sleeps, then would append `finished`.
Killed mid-sleep (its `actions.requested` is durable, its result is not):

- the command dies with the server (it was started with a parent-death signal, and bubblewrap's
  PID namespace takes everything inside with it): `finished` is never written;
- after the restart the call is not run again (`started` once), no result is invented for it, and
  the model is told the call was interrupted and may or may not have taken effect;
- the harness's invariants hold on the stream.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.crash.harness import Client, EveProcess, check, scaffold
from tests.crash.test_subagent_crash import events_offline, of_type, step_attempts, wait_until

pytestmark = pytest.mark.scenario

COMMAND = "echo started >> ledger.txt; sleep 3; echo finished >> ledger.txt"


def test_a_kill_during_bash_is_reported_not_rerun(tmp_path: Path) -> None:
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start()
        created = client.create("op-bash", "/call bash " + json.dumps({"command": COMMAND}))
        assert created.session is not None
        session = created.session
        written = app / ".eve" / "sandboxes" / session / "workspace" / "ledger.txt"
        wait_until(client, session, lambda events: bool(of_type(events, "actions.requested")), "the call started")
        deadline = time.monotonic() + 20
        while not (written.exists() and written.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert written.read_text() == "started\n"
        server.kill()
        offline = events_offline(app, session)
        assert of_type(offline, "action.result") == []  # killed before its result was recorded
        time.sleep(3.5)
        assert written.read_text() == "started\n"  # the command died with the server
        server.start()
        events = client.wait_quiet(session, turns=1, timeout=30)
        assert written.read_text() == "started\n"  # and was not run again
        assert len(of_type(events, "actions.requested")) == 1
        (closed,) = of_type(events, "action.result")  # closed once, as abandoned, by the recovery
        assert closed["data"]["status"] == "failed" and closed["data"]["error"]["code"] == "ACTION_ABANDONED"
        assert step_attempts(events, 0) == 2
        (completed,) = of_type(events, "turn.completed")
        reply = [e for e in of_type(events, "message.completed") if e["data"]["finishReason"] != "tool-calls"]
        assert "was not run again" in reply[-1]["data"]["message"], reply
        assert completed is not None
        ledger.touch()
        report = check(client, [session], ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()
