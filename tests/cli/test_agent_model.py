"""`/model` rewrites the model literal of `define_agent` and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_cli.agent_model import ModelChangeError, current_model, set_model

HEADER = "from eve_runtime import define_agent\n\n# keep this comment\n"


def agent_with(tmp_path: Path, call: str) -> Path:
    (tmp_path / "agent.py").write_text(HEADER + call + "\n")
    return tmp_path


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('agent = define_agent(model="test")', 'agent = define_agent(model="openai/gpt-5.4-mini")'),
        (
            "agent = define_agent(model='test', max_steps=3)",
            'agent = define_agent(model="openai/gpt-5.4-mini", max_steps=3)',
        ),
        ("agent = define_agent()", 'agent = define_agent(model="openai/gpt-5.4-mini")'),
        ("agent = define_agent(max_steps=3)", 'agent = define_agent(max_steps=3, model="openai/gpt-5.4-mini")'),
        (
            "agent = define_agent(\n    max_steps=3,\n)",
            'agent = define_agent(\n    max_steps=3, model="openai/gpt-5.4-mini"\n)',
        ),
    ],
)
def test_the_literal_is_replaced_or_added(tmp_path: Path, call: str, expected: str) -> None:
    written = set_model(agent_with(tmp_path, call), "openai/gpt-5.4-mini")
    assert written.read_text() == HEADER + expected + "\n"
    assert current_model(written) == "openai/gpt-5.4-mini"


def test_a_missing_agent_file_is_created(tmp_path: Path) -> None:
    written = set_model(tmp_path, "test")
    assert current_model(written) == "test"


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ("agent = define_agent(model=pick())", "computed"),
        ("agent = 1", "does not call define_agent"),
        ("agent = define_agent(", "does not parse"),
    ],
)
def test_files_it_cannot_edit_safely_are_left_alone(tmp_path: Path, call: str, problem: str) -> None:
    root = agent_with(tmp_path, call)
    with pytest.raises(ModelChangeError, match=problem):
        set_model(root, "test")
    assert (root / "agent.py").read_text() == HEADER + call + "\n"


def test_bad_model_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelChangeError, match="not a model id"):
        set_model(agent_with(tmp_path, "agent = define_agent()"), "gpt 4")


def test_an_unknown_provider_is_refused_with_the_closest(tmp_path: Path) -> None:
    root = agent_with(tmp_path, "agent = define_agent()")
    with pytest.raises(ModelChangeError, match="names the provider 'opanai'.*did you mean 'openai'"):
        set_model(root, "opanai/gpt-4o-mini")
    assert (root / "agent.py").read_text() == HEADER + "agent = define_agent()\n"
