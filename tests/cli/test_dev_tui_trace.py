"""`eve dev --trace` with the terminal UI: each turn's span tree shows above the prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_dev_tui import app, config_home, quit_cleanly, terminal  # noqa: F401 (fixtures)

pytestmark = pytest.mark.scenario


def test_a_turns_tree_shows_above_the_prompt(app: Path, config_home: Path) -> None:  # noqa: F811
    with terminal(app, config_home, "--trace") as session:
        session.line('/call get_weather {"city": "Paris"}')
        session.expect(r"● get_weather -> ")
        session.expect(r"trace [0-9a-f]{32} · weather turn_0 · completed")
        session.expect(r"└── invoke_agent weather  [\d.]+ ms · in \d+ · out \d+ tokens")
        session.expect(r"│   └── execute_tool get_weather")
        session.expect(r"└── chat test  [\d.]+ ms · in \d+ · out \d+ tokens · stop")
        quit_cleanly(session)
