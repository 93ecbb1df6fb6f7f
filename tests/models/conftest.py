"""A real local OpenAI-compatible server for the litellm tests, and calls allowed to reach it.

A module opts in with `pytestmark = pytest.mark.usefixtures("real_local_calls")` (one server per module).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import eve_runtime.models as models
from tests.fixtures.openai_server import LocalOpenAIServer


@pytest.fixture(scope="module")
def server() -> Iterator[LocalOpenAIServer]:
    fixture = LocalOpenAIServer().start()
    try:
        yield fixture
    finally:
        fixture.stop()


@pytest.fixture
def real_local_calls(server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalOpenAIServer]:
    """Model requests allowed (only 127.0.0.1 is reachable, tests/conftest.py), with a key and no base URL set."""
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-a-key")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    server.state.requests.clear()
    yield server
