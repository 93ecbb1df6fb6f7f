"""kill -9 a real `eve start` in the middle of a compaction: the history is the old one or the new one.

The crash point `during-compaction` fires once the summary exists and before the transaction that
swaps the history in. After the restart, a requested compaction is not run again (it ends, with
`session.waiting`, on the old history), and an automatic one runs again with the interrupted step.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.crash.harness import TOKEN, Client, EveProcess, check, scaffold

pytestmark = pytest.mark.scenario

SUMMARY_HEADER = "Summary of our conversation so far:"


def stored_history(app: Path, session: str) -> list[dict[str, Any]]:
    """The session's history log, read straight from the local world's database."""
    conn = sqlite3.connect(app / ".eve" / "workflow-data" / "eve.sqlite3")
    try:
        rows = conn.execute("SELECT message FROM history WHERE session_id = ? ORDER BY seq", (session,)).fetchall()
    finally:
        conn.close()
    return [json.loads(row[0]) for row in rows]


def post_compact(server: EveProcess, session: str) -> int | None:
    """POST .../compact; its status, or None when the process died before answering."""
    try:
        with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
            return http.post(f"/eve/v1/session/{session}/compact").status_code
    except httpx.TransportError:
        return None


def test_a_kill_during_a_requested_compaction_keeps_the_old_history(tmp_path: Path) -> None:
    app = scaffold(tmp_path)
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    try:
        server.start(crashpoint="during-compaction")
        created = client.create("op-1", "remember me")
        assert created.outcome == "ok" and created.session is not None
        session = created.session
        client.wait_quiet(session)
        before = stored_history(app, session)
        assert post_compact(server, session) in (202, None)
        assert server.wait_dead(), "the process did not die during the compaction"
        server.kill()
        assert stored_history(app, session) == before  # the kill left the old history
        server.start()
        events = client.wait_quiet(session)
        kinds = [e["type"] for e in events]
        assert kinds[-2:] == ["compaction.requested", "session.waiting"]  # ended, not run again
        assert stored_history(app, session) == before
        assert post_compact(server, session) == 202  # a new request compacts
        events = client.wait_quiet(session)
        assert [e["type"] for e in events][-3:] == ["compaction.requested", "compaction.completed", "session.waiting"]
        history = stored_history(app, session)
        assert [m["content"] for m in history] == [
            SUMMARY_HEADER,
            "summary of 2 messages; last user message: remember me",
        ]
        follow_up = client.send(session, "/reply still here", "k-after")
        assert follow_up.outcome == "ok"
        client.wait_quiet(session, turns=2, deliveries={follow_up.delivery or ""})
        report = check(client, [session], ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()


def test_a_kill_during_an_automatic_compaction_reruns_the_step(tmp_path: Path) -> None:
    app = scaffold(tmp_path)
    (app / "agent" / "agent.py").write_text(
        "from eve_runtime import define_agent\n\n"
        "agent = define_agent(model='test', model_context_window_tokens=4000, compaction={'threshold_percent': 0.5})\n"
    )
    ledger = tmp_path / "ledger.ndjson"
    server = EveProcess(app, ledger)
    client = Client(server)
    words = " ".join(f"w{i}" for i in range(700))
    try:
        server.start(crashpoint="during-compaction")
        created = client.create("op-1", words)
        assert created.outcome == "ok" and created.session is not None
        session = created.session
        client.wait_quiet(session)
        before = stored_history(app, session)
        sent = client.send(session, f"/reply done\n{words}", "k-1")
        assert server.wait_dead(), "the process did not die during the compaction"
        server.kill()
        assert stored_history(app, session)[: len(before)] == before  # the old history, untouched
        server.start()
        if sent.outcome != "ok":
            sent = client.send(session, f"/reply done\n{words}", "k-1")
        events = client.wait_quiet(session, turns=2, deliveries={sent.delivery or ""})
        replies = [e["data"]["message"] for e in events if e["type"] == "message.completed"]
        assert replies[-1] == "done"
        history = stored_history(app, session)
        # the first turn folded into the summary; the second turn's message and reply kept verbatim
        assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
        assert history[0]["content"] == SUMMARY_HEADER and history[-1]["content"] == "done"
        report = check(client, [session], ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()
