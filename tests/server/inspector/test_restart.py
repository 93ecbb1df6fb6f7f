"""The server killed (SIGKILL) and restarted mid-turn while the page follows the session: the
page reconnects from its cursor and carries on, with every event once and none missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.inspector.support import EveDev, screenshot

pytestmark = [pytest.mark.scenario, pytest.mark.xdist_group("inspector")]  # one worker: one browser per module

WORDS = " ".join(f"w{n}" for n in range(1, 17))


@pytest.fixture
def restartable(dev_app: Path, browser: Any) -> Iterator[EveDev]:
    server = EveDev(dev_app, dev_app.parent / "eve-dev-restart.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_page_resumes_after_a_restart_mid_turn(page: Any, restartable: EveDev, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    message = f"/delay 100\n/say {WORDS}"
    session_id = restartable.create(message)
    page.goto(f"{restartable.url}/#/session/{session_id}")
    streaming = page.locator('.item.assistant[data-state="streaming"] .text')
    expect(streaming).to_contain_text("w3")  # mid-turn: the reply is streaming

    restartable.kill()
    expect(page.locator("#session")).to_have_attribute("data-stream", "reconnecting")
    screenshot(page, tmp_path, "restart-server-down")
    restartable.start("--resume")  # the same port and store; the unfinished turn runs on

    expect(page.locator('.item.assistant[data-state="completed"] .text')).to_have_text(WORDS, timeout=30_000)
    expect(page.locator("#session")).to_have_attribute("data-status", "idle")
    expect(page.locator("#session")).to_have_attribute("data-stream", "live")
    assert page.locator(".item.user").count() == 1
    assert page.locator('.item.assistant[data-state="completed"]').count() == 1
    screenshot(page, tmp_path, "restart-resumed")

    stored = restartable.stored_events(session_id)
    assert [e["type"] for e in stored].count("turn.completed") == 1
    page.click(".tabs a:has-text('Raw events')")
    rows = page.locator(".raw-table tbody tr")
    expect(rows).to_have_count(len(stored))
    indexes = rows.evaluate_all("rows => rows.map(r => Number(r.dataset.index))")
    ids = page.locator(".raw-table .raw-id").evaluate_all("cells => cells.map(c => c.textContent)")
    assert indexes == list(range(len(stored)))  # no gap
    assert ids == [e["meta"]["id"] for e in stored]  # no duplicate, in the stored order
    assert page.locator("#session").get_attribute("data-events") == str(len(stored))
