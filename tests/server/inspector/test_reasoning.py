"""Reasoning shows collapsed, and a turn's cost shows beside its tokens (a model that reports both)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from eve_runtime.messages import Message
from eve_runtime.models.base import Finish, ReasoningDelta, TextDelta, Usage
from eve_runtime.models.function import FunctionInfo, FunctionModel, FunctionStreamItem
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from tests.server.inspector.support import screenshot
from tests.server.support import LiveServer

pytestmark = pytest.mark.xdist_group("inspector")  # with the other browser modules, on one worker

THOUGHT = "The person asks about Paris. <b>Sunny</b> days call for a short answer."


async def think_then_answer(messages: Sequence[Message], info: FunctionInfo) -> AsyncIterator[FunctionStreamItem]:
    for piece in ("The person asks about Paris. ", "<b>Sunny</b> days call for a short answer."):
        yield ReasoningDelta(piece)
    yield TextDelta("It is sunny in Paris.")
    yield Finish("stop", Usage(input_tokens=120, output_tokens=30), cost_usd=0.0123)


@pytest.fixture
def served(agent: RuntimeAgent, manifest: Manifest, browser: Any) -> Iterator[LiveServer]:
    with LiveServer(agent, manifest, models={"test": FunctionModel(stream_function=think_then_answer)}) as server:
        yield server


def test_reasoning_is_collapsed_and_the_cost_shows(page: Any, served: LiveServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    created = httpx.post(f"{served.url}/eve/v1/session", json={"message": "Weather in Paris?"}, timeout=10)
    session_id = created.json()["sessionId"]
    page.goto(f"{served.url}/#/session/{session_id}")
    expect(page.locator('.item.assistant[data-state="completed"] .text')).to_have_text("It is sunny in Paris.")
    reasoning = page.locator(".item.reasoning details")
    expect(reasoning.locator("summary")).to_have_text(f"reasoning ({len(THOUGHT)} characters)")
    assert reasoning.get_attribute("open") is None  # collapsed
    expect(reasoning.locator(".text")).to_be_hidden()
    reasoning.locator("summary").click()
    expect(reasoning.locator(".text")).to_have_text(THOUGHT)
    expect(page.locator(".item.turn .usage")).to_have_text("120 in / 30 out · $0.0123")
    expect(page.locator(".session-head .usage")).to_contain_text("$0.0123")
    screenshot(page, tmp_path, "reasoning-and-cost")
