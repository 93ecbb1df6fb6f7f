"""Acting on a session from the page (send with steer or queue, cancel, compact, clear, reset, a
failed turn's code), and the page under `eve start --inspector`, behind the bearer token.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.inspector.support import EveDev, screenshot
from tests.server.support import scaffold_app

pytestmark = [pytest.mark.scenario, pytest.mark.xdist_group("inspector")]  # one worker: one browser per module

TOKEN = "inspector-browser-token-0123"


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def send(page: Any, message: str, policy: str = "steer") -> None:
    page.fill("form.composer:not(.new-session) textarea", message)
    page.select_option("select.turn-policy", policy)
    page.click("form.composer:not(.new-session) button.send")


def test_the_controls_act_on_the_session(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    session_id = eve_dev.create("/delay 200\n/say " + " ".join(f"slow{n}" for n in range(40)))
    page.goto(f"{eve_dev.url}/#/session/{session_id}")
    expect()(page.locator('.item.assistant[data-state="streaming"]')).to_be_visible()
    page.click("button.control-cancel")
    expect()(page.locator(".item.marker")).to_have_text("turn cancelled")
    expect()(page.locator('.item.assistant[data-state="interrupted"] .text')).to_contain_text("slow0")
    expect()(page.locator("#session")).to_have_attribute("data-status", "idle")

    send(page, "/reply queued answer", "queue")
    expect()(page.locator('.item.assistant[data-state="completed"] .text').last).to_have_text("queued answer")
    send(page, "/fail the provider said no")
    failed = page.locator(".item.marker.tone-error", has_text="turn failed: MODEL_CALL_FAILED")
    expect()(failed).to_contain_text("the provider said no")
    expect()(page.locator(".item.marker.tone-error", has_text="step 0 failed")).to_be_visible()

    page.click("button.control-compact")
    expect()(page.locator(".item.marker", has_text="conversation compacted")).to_be_visible()
    page.click("button.control-clear")
    expect()(page.locator(".item.marker", has_text="context cleared")).to_be_visible()
    screenshot(page, tmp_path, "controls")
    page.click("button.control-reset")
    expect()(page.locator("#session")).to_have_attribute("data-status", "ended")
    expect()(page.locator("#session")).to_have_attribute("data-stream", "ended")
    types = [event["type"] for event in eve_dev.stored_events(session_id)]
    for expected in ("turn.cancelled", "turn.failed", "compaction.completed", "context.cleared", "session.completed"):
        assert expected in types


@pytest.fixture(scope="module")
def eve_start(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[EveDev]:
    app = scaffold_app(tmp_path_factory.mktemp("inspector-start") / "weather-agent")  # a store of its own
    server = EveDev(
        app,
        app.parent / "eve-start.log",
        command=("start", "--inspector"),
        env={"EVE_AUTH_TOKEN": TOKEN},
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_eve_start_inspector_asks_for_the_token(page: Any, eve_start: EveDev, tmp_path: Path) -> None:
    session_id = eve_start.create("/reply behind the token")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(eve_start.url + "/")
    prompt = page.locator("#token-prompt")
    expect()(prompt).to_be_visible()  # the first data call answered 401
    screenshot(page, tmp_path, "token-prompt")
    page.fill("#token-prompt input", "wrong-token-0123456789")
    page.click("#token-prompt button")
    expect()(prompt).to_be_visible()
    page.fill("#token-prompt input", TOKEN)
    page.click("#token-prompt button")
    expect()(prompt).to_be_hidden()
    row = page.locator(f'tr[data-session-id="{session_id}"]')
    expect()(row).to_contain_text("/reply behind the token")
    row.locator("a").click()
    expect()(page.locator('.item.assistant[data-state="completed"] .text')).to_have_text("behind the token")
    assert page.evaluate("sessionStorage.getItem('eve.inspector.token')") == TOKEN
    assert not any(TOKEN in url for url in requests)  # never in a URL
    page.click("#forget-token")
    assert page.evaluate("sessionStorage.getItem('eve.inspector.token')") is None
    expect()(prompt).to_be_visible()
