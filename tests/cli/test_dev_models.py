"""`eve dev` on a real provider's model: the missing key said at start, then fixed by a save; retries shown.

The provider is the local OpenAI-compatible server of `tests/fixtures/openai_server.py` (a thread of
this test process, on 127.0.0.1), reached through `model_options={"api_base": ...}`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.pty_session import PtySession
from tests.cli.test_serve import _eve, serving
from tests.fixtures.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.scenario

EVE = str(Path(sys.executable).with_name("eve"))
AGENT = """from eve_runtime import define_agent

agent = define_agent(model={model!r}, model_options={{"api_base": {url!r}}})
"""


@pytest.fixture(scope="module")
def provider() -> Iterator[LocalOpenAIServer]:
    server = LocalOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def app(tmp_path: Path) -> Path:
    done = subprocess.run([EVE, "init", "weather", "-n"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return tmp_path / "weather"


def _use(app: Path, model: str, provider: LocalOpenAIServer) -> None:
    (app / "agent" / "agent.py").write_text(AGENT.format(model=model, url=provider.base_url))


def test_the_terminal_ui_warns_of_the_missing_key_then_shows_each_retry(
    app: Path, provider: LocalOpenAIServer, tmp_path: Path
) -> None:
    _use(app, "openai/flaky-1-tui", provider)  # its first request fails with a 503, the next ones answer
    env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config"), "COLUMNS": "120"}
    session = PtySession([EVE, "dev", "--port", "0"], cwd=app, env=env)
    try:
        session.expect(r"warning: OPENAI_API_KEY is not set, so every turn on openai/flaky-1-tui fails")
        session.expect(r" · /help")
        session.line("hi")
        session.expect(r"✗ the turn failed: MODEL_CALL_FAILED: The model 'openai/flaky-1-tui' needs an API key in")
        assert provider.state.counts.get("flaky-1-tui") is None, "a missing key sends no request"
        (app / ".env").write_text("OPENAI_API_KEY=sk-local-not-a-real-key\n")
        session.expect(r"↻ reloaded")
        session.line("hello again")
        # The first real call imports litellm (seconds, more on a busy machine).
        session.expect(r"↻ retrying 2/4 in \d\.\d s: The model 'openai/flaky-1-tui' failed \(HTTP 503\)", 90)
        session.expect(r"● echo: hello again", 30)
        session.line("/quit")
        assert session.wait() == 0
    finally:
        session.close()


def test_dev_without_the_ui_logs_the_missing_key_at_start(app: Path, provider: LocalOpenAIServer) -> None:
    _use(app, "openai/echo", provider)
    with serving(app, "dev", "--no-ui") as server:
        server.stop()
    assert "the model openai/echo needs an API key in OPENAI_API_KEY, which is not set" in server.stderr


def test_the_offline_example_of_docs_models_runs(app: Path, provider: LocalOpenAIServer) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", docs, re.DOTALL)
    (agent,) = [code for lang, code in blocks if lang == "python" and '"openai/echo"' in code]
    (dot_env,) = re.findall(r"echo '([^']+)' > \.env", docs)
    assert "127.0.0.1:4010" in agent
    (app / "agent" / "agent.py").write_text(agent.replace("127.0.0.1:4010", f"127.0.0.1:{provider.port}"))
    (app / ".env").write_text(dot_env + "\n")
    with serving(app, "dev", "--no-ui"):
        sent = _eve(app, "send", "hello", timeout=120)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.strip() == "echo: hello"
    assert provider.state.requests[-1].model == "echo"
