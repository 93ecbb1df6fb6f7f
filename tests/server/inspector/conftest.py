"""Fixtures of the browser scenarios: one headless Chromium per module (Debian's package, driven
by Playwright's Python API), a fresh page per test, and `eve dev` processes per module.

Per module, not per test session: while Playwright's sync API is started, its event loop counts
as running in this thread, so every later test that runs a loop of its own (`asyncio.run`, the
anyio plugin) would fail with "Cannot run the event loop while another loop is running". A
module's tests run together, so the browser stops before any other module's test starts.

Without Chromium (or Playwright) every scenario is skipped with the reason (`make chromium`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.inspector.support import CHROMIUM, EveDev, browser_missing
from tests.server.support import scaffold_app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = browser_missing()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh context; a script error on it fails the test."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(15_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert errors == [], f"the page threw: {errors}"


QUESTIONS_TOOL = '''
from eve_runtime import ToolContext


async def questions(ctx: ToolContext) -> dict:
    """Ask the person two questions: one with options, one in their own words."""
    colour = await ctx.ask("Which colour?", options=["Red", "Blue"])
    name = await ctx.ask("What is your name?")
    return {"colour": dict(colour), "name": dict(name)}
'''


@pytest.fixture(scope="module")
def dev_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template app on the `test` model, plus a tool that asks questions."""
    app = scaffold_app(tmp_path_factory.mktemp("inspector") / "weather-agent")
    (app / "agent" / "tools" / "questions.py").write_text(QUESTIONS_TOOL)
    return app


@pytest.fixture(scope="module")
def eve_dev(dev_app: Path, browser: Any) -> Iterator[EveDev]:
    """`eve dev` on the module's app (the browser first, so a skip starts no process)."""
    server = EveDev(dev_app, dev_app.parent / "eve-dev.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()
