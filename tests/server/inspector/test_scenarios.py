"""The inspector in a real browser against a real `eve dev`: streaming, approvals, subagents,
content shown as text, and a broken save shown until it is fixed. Each saves a screenshot.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.server.inspector.support import REPO, EveDev, screenshot

pytestmark = [pytest.mark.scenario, pytest.mark.xdist_group("inspector")]  # one worker: one browser per module

WORDS = " ".join(f"word{n}" for n in range(1, 11))
ALERT = '/call send_alert {"city":"Paris","message":"Heat wave from noon"}'
README_IMAGE = REPO / "docs" / "images" / "inspector-session.png"


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def start_from_the_list(page: Any, eve_dev: EveDev, message: str) -> str:
    """Open the sessions list, start a session with `message`, and return its id (the page opens it)."""
    page.goto(eve_dev.url + "/")
    page.fill("form.new-session textarea", message)
    page.click("form.new-session button.send")
    page.wait_for_selector("#session[data-session-id]")
    return str(page.get_attribute("#session", "data-session-id"))


def test_a_chat_turn_streams_into_the_page(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    session_id = start_from_the_list(page, eve_dev, f"/delay 120\n/say {WORDS}")
    streaming = page.locator('.item.assistant[data-state="streaming"]')
    expect()(streaming).to_be_visible()  # the text arrives word by word, before the step ends
    done = page.locator('.item.assistant[data-state="completed"] .text')
    expect()(done).to_have_text(WORDS)
    expect()(page.locator("#session")).to_have_attribute("data-status", "idle")
    expect()(page.locator(".item.turn .usage")).to_contain_text(" in / ")
    screenshot(page, tmp_path, "chat-streams")

    page.goto(eve_dev.url + "/")  # the list shows it, with its first message and usage
    row = page.locator(f'tr[data-session-id="{session_id}"]')
    expect()(row).to_contain_text("/delay 120")
    expect()(row).to_contain_text(" in / ")
    page.select_option("select.state-filter", "running")
    expect()(row).to_have_count(0)
    page.select_option("select.state-filter", "idle")
    expect()(row).to_have_count(1)


def test_an_approval_is_answered_by_a_click(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    start_from_the_list(page, eve_dev, '/call get_weather {"city":"Paris"}\n' + ALERT)
    approve = page.locator('.request button.option[data-option-id="approve"]')
    expect()(approve).to_be_visible()
    expect()(page.locator('.item.tool[data-approval="pending"] .tool-name')).to_have_text("send_alert")
    expect()(page.locator('.item.tool[data-state="completed"] .tool-name')).to_have_text("get_weather")
    shot = screenshot(page, tmp_path, "approval-waiting")
    if os.environ.get("EVE_README_IMAGE") == "1":  # the README's picture: a tool call and an approval
        shutil.copyfile(shot, README_IMAGE)

    approve.click()
    approved = page.locator('.item.tool[data-approval="approved"][data-state="completed"]')
    expect()(approved).to_contain_text("send_alert")
    expect()(approved.locator("details.io pre").last).to_contain_text('"sent": true')
    expect()(page.locator(".pending")).to_be_hidden()
    expect()(page.locator("#session")).to_have_attribute("data-status", "idle")
    screenshot(page, tmp_path, "approval-answered")


def test_questions_are_answered_with_an_option_and_in_words(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    start_from_the_list(page, eve_dev, "/call questions {}")
    request = page.locator('.request[data-kind="question"]')
    expect()(request.locator(".prompt")).to_have_text("Which colour?")
    expect()(request.locator("button.option")).to_have_text(["Red", "Blue"])
    request.locator('button.option[data-option-id="blue"]').click()
    expect()(request.locator(".prompt")).to_have_text("What is your name?")
    request.locator("input.freeform").fill("Ada <b>Lovelace</b>")
    screenshot(page, tmp_path, "question-in-words")
    request.locator("button.send-answer").click()
    output = page.locator('.item.tool[data-state="completed"] details.io pre').last
    expect()(output).to_contain_text('"optionId": "blue"')
    expect()(output).to_contain_text('"text": "Ada <b>Lovelace</b>"')
    expect()(page.locator(".pending")).to_be_hidden()


def test_a_subagent_opens_from_its_parent(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    parent = start_from_the_list(page, eve_dev, '/call forecaster {"message":"/reply Sunny all week"}')
    link = page.locator(".item.tool.subagent a.child-link")
    expect()(link).to_be_visible()
    expect()(page.locator(".item.tool.subagent .badge.task")).to_have_text("task completed")
    screenshot(page, tmp_path, "subagent-parent")
    link.click()
    child = page.locator("#session")
    expect()(child).not_to_have_attribute("data-session-id", parent)
    expect()(page.locator('.item.assistant[data-state="completed"] .text')).to_have_text("Sunny all week")
    expect()(page.locator("a.parent-link")).to_have_attribute("href", f"#/session/{parent}")
    screenshot(page, tmp_path, "subagent-child")


def test_a_message_with_markup_is_shown_as_text(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    hostile = '<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2"><b>bold</b>'
    message = f"{hostile}\n" + '/call send_alert {"city":"<i>Paris</i>","message":"<script>alert(1)</script>"}'
    start_from_the_list(page, eve_dev, message)
    expect()(page.locator(".item.user .text")).to_have_text(message)
    expect()(page.locator(".request .prompt")).to_be_visible()
    expect()(page.locator(".item.tool .io pre").first).to_contain_text("<script>alert(1)</script>")
    page.click('.request button.option[data-option-id="cancel"]')
    expect()(page.locator('.item.assistant[data-state="completed"]')).to_be_visible()
    assert page.evaluate("window.__injected") is None
    assert page.locator("#view b, #view i, #view img, #view script").count() == 0  # no markup from content
    screenshot(page, tmp_path, "markup-as-text")

    page.goto(eve_dev.url + "/")  # the list's preview too
    expect()(page.locator("td.preview").first).to_contain_text("<script>")
    assert page.evaluate("window.__injected") is None


def test_the_raw_view_lists_every_event_with_a_permalink(page: Any, eve_dev: EveDev, tmp_path: Path) -> None:
    session_id = eve_dev.create('/call get_weather {"city":"Oslo"}')
    stored = wait_stored(eve_dev, session_id, "session.waiting")
    page.goto(f"{eve_dev.url}/#/session/{session_id}/raw/3")
    rows = page.locator(".raw-table tbody tr")
    expect()(rows).to_have_count(len(stored))
    assert page.locator(".raw-table tr[data-index]").evaluate_all("rows => rows.map(r => r.dataset.index)") == [
        str(n) for n in range(len(stored))
    ]
    target = page.locator("tr.target")
    expect()(target).to_have_attribute("data-index", "3")
    expect()(target.locator(".raw-id")).to_have_text(stored[3]["meta"]["id"])
    expect()(target.locator(".raw-at")).to_have_text(stored[3]["meta"]["at"])
    page.select_option("select.raw-filter", "action.result")
    expect()(page.locator(".raw-table tbody tr:visible")).to_have_count(
        sum(e["type"] == "action.result" for e in stored)
    )
    screenshot(page, tmp_path, "raw-events")


def test_the_agent_page_and_a_broken_save(page: Any, eve_dev: EveDev, dev_app: Path, tmp_path: Path) -> None:
    page.goto(eve_dev.url + "/#/agent")
    expect()(page.locator('[data-part="tools"]')).to_contain_text("get_weather")
    expect()(page.locator('[data-part="tools"]')).to_contain_text("send_alert")
    expect()(page.locator('[data-part="subagents"]')).to_contain_text("forecaster")
    expect()(page.locator('[data-part="skills"]')).to_contain_text("plan_a_day")
    expect()(page.locator('[data-part="schedules"]')).to_contain_text("weekly-outlook")
    expect()(page.locator('[data-part="channels"]')).to_contain_text("webhook")
    expect()(page.locator('[data-part="instructions"]')).to_contain_text("weather")
    page.click('[data-part="schedules"] button.run-schedule')  # fired by hand, as `eve schedules run` does
    expect()(page.locator("#agent .notice")).to_contain_text("started wrun_")
    banner = page.locator("#build-banner")
    expect()(banner).to_be_hidden()

    broken = dev_app / "agent" / "tools" / "broken_tool.py"
    broken.write_text("def broken_tool(city: str) -> str\n    return city\n")  # a syntax error
    try:
        expect()(banner).to_be_visible()
        expect()(banner).to_contain_text("broken_tool.py")
        expect()(page.locator(".agent-build .badge")).to_have_text("failed")
        screenshot(page, tmp_path, "broken-save")
        page.goto(eve_dev.url + "/")  # shown on every page until it is fixed
        expect()(banner).to_contain_text("broken_tool.py")
    finally:
        broken.write_text('def broken_tool(city: str) -> str:\n    """Echo a city."""\n    return city\n')
    expect()(banner).to_be_hidden()
    page.goto(eve_dev.url + "/#/agent")
    expect()(page.locator('[data-part="tools"]')).to_contain_text("broken_tool")
    expect()(page.locator(".agent-build .badge")).to_have_text("ready")
    screenshot(page, tmp_path, "broken-save-fixed")


def wait_stored(eve_dev: EveDev, session_id: str, event_type: str) -> list[dict[str, Any]]:
    """The session's stored events once one of `event_type` is among them (a follow read that ends there)."""
    import httpx

    seen: list[dict[str, Any]] = []
    with httpx.stream("GET", f"{eve_dev.url}/eve/v1/session/{session_id}/stream", timeout=20) as response:
        for line in response.iter_lines():
            if not line.strip() or "$eve" in json.loads(line):
                continue
            seen.append(json.loads(line))
            if seen[-1]["type"] == event_type:
                return seen
    raise AssertionError(f"the stream ended without {event_type}")
