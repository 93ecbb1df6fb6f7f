"""Fixtures for the command-line tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]

PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "XAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHERAI_API_KEY",
    "COHERE_API_KEY",
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No provider keys from the machine, a scratch working folder, and os.environ restored afterwards."""
    for key in [k for k in os.environ if k.endswith("_API_KEY")] + list(PROVIDER_KEYS):
        monkeypatch.delenv(key, raising=False)
    saved = dict(os.environ)
    monkeypatch.chdir(tmp_path)
    yield
    os.environ.clear()
    os.environ.update(saved)


def copy_template(folder: Path) -> Path:
    """The default template as `folder/app`, on the offline `test` model."""
    shutil.copytree(REPO / "templates" / "default", folder / "app")
    for agent in (folder / "app" / "agent").rglob("agent.py"):
        agent.write_text(agent.read_text().replace("{{model}}", "test"))
    return folder / "app"


@pytest.fixture
def template_app(tmp_path: Path) -> Path:
    """The default template in a scratch folder, on the offline `test` model."""
    return copy_template(tmp_path)
