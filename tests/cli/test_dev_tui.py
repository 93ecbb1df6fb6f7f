"""The terminal UI of `eve dev`, driven through a pseudo-terminal as a new user would drive it.

Each test is one thing a person does: scaffold with `eve init`, start `eve dev`, chat, edit a tool
while a slow turn runs, break and fix a tool, approve a call, steer and cancel turns, quit, and
come back with `--resume`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from eve_runtime.serving.dev_server import read_record
from tests.cli.pty_session import PtySession
from tests.cli.test_dev import TOOL

pytestmark = pytest.mark.scenario

EVE = str(Path(sys.executable).with_name("eve"))


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A project made by `eve init` (offline test model), plus a tool that tells its version."""
    done = subprocess.run([EVE, "init", "weather", "-n"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "weather"
    (root / "agent" / "tools" / "version.py").write_text(TOOL.format(label="v1", delay=0))
    return root


@pytest.fixture
def config_home(tmp_path: Path) -> Path:
    return tmp_path / "config"


@contextmanager
def terminal(app: Path, config_home: Path, *args: str) -> Iterator[PtySession]:
    """`eve dev` in a pseudo-terminal, ready for input (its prompt drawn); killed if a test leaves it running."""
    env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(config_home), "COLUMNS": "120"}
    session = PtySession([EVE, "dev", "--port", "0", *args], cwd=app, env=env)
    try:
        session.expect(r"/help lists the commands")
        session.expect(r" · /help")  # the toolbar: the prompt is up and reads keys
        yield session
    finally:
        session.close()


STATUS_LINE = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [A-Z][^·]* · \d+s · ")
"""The status line drawn above the prompt while a turn runs (`⠙ Waiting for your answer · 4s · ...`)."""


def assert_no_status_line(session: PtySession) -> None:
    """The screen, scrollback included, shows no status line (call it once the turn has ended).

    The live one goes at the next redraw of the prompt; one frozen into the transcript never goes.
    """
    deadline = time.monotonic() + 5
    while stale := [line for line in session.screen_lines() if STATUS_LINE.search(line)]:
        assert time.monotonic() < deadline, "a status line stayed on the screen:\n" + "\n".join(
            session.screen_lines()[-60:]
        )
        time.sleep(0.1)
    assert not stale


def quit_cleanly(session: PtySession) -> None:
    session.line("/quit")
    assert session.wait() == 0


def test_init_dev_chat_and_quit(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        record = read_record(app)
        assert record is not None and record.url in session.text
        session.line("hello there")
        session.expect(r"● echo: hello there")
        session.expect(r"this turn: \d+ in / \d+ out tokens · \d+ in / \d+ out in this session")
        quit_cleanly(session)
        session.expect(r"Stopped the server\. .* eve dev --resume to pick up the newest unfinished one")
    assert read_record(app) is None, "quitting the UI stops the server and removes its record"
    logs = list((app / ".eve" / "logs").glob("dev-*.log"))
    assert logs and "opened the eve store" in logs[0].read_text(), "the server logs to a file while the UI runs"


def test_tool_calls_show_collapsed_with_their_results(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line('/call get_weather {"city": "Paris"}')
        session.expect(r'▸ get_weather \{"city":"Paris"\}')
        session.expect(r'↳ \{"city":"Paris","condition":"Sunny","temperatureF":72\}')
        session.expect(r"● get_weather -> ")
        quit_cleanly(session)


def test_editing_a_tool_while_a_slow_turn_runs(app: Path, config_home: Path) -> None:
    tool = app / "agent" / "tools" / "version.py"
    tool.write_text(TOOL.format(label="v1", delay=1.5))
    with terminal(app, config_home) as session:
        session.line("/call version {}")
        session.expect(r"▸ version")
        tool.write_text(TOOL.format(label="v2", delay=0))
        session.expect(r"↻ reloaded: generation \d+ serves the next turn")
        session.expect(r'● version -> "v1"', timeout=20)  # the running turn finished on its own code
        session.expect(r"in this session")
        session.line("/call version {}")
        session.expect(r'● version -> "v2"')  # the next turn runs the new code
        quit_cleanly(session)


def test_a_broken_tool_keeps_the_old_one_serving_until_fixed(app: Path, config_home: Path) -> None:
    tool = app / "agent" / "tools" / "version.py"
    with terminal(app, config_home) as session:
        tool.write_text("def version(:\n")
        session.expect(r"✗ the agent has errors: generation \d+ keeps serving")
        session.expect(r"tools/version\.py")
        session.line("/call version {}")
        session.expect(r'● version -> "v1"')
        session.expect(r"in this session")
        tool.write_text(TOOL.format(label="fixed", delay=0))
        session.expect(r"↻ reloaded")
        session.line("/call version {}")
        session.expect(r'● version -> "fixed"')
        quit_cleanly(session)


def test_a_broken_agent_at_start_shows_its_errors_and_serves_the_fix(app: Path, config_home: Path) -> None:
    tool = app / "agent" / "tools" / "version.py"
    tool.write_text("def version(:\n")
    with terminal(app, config_home) as session:  # it does not exit: it waits for the fix
        session.expect(r"✗ the agent has errors, so nothing serves yet: fix them and save", anywhere=True)
        session.expect(r"agent/tools/version\.py:1 ")
        session.line("hello")
        session.expect(r"409 agent_has_errors: The agent has 1 error\(s\), so eve dev cannot run it yet")
        assert_no_status_line(session)
        tool.write_text(TOOL.format(label="fixed", delay=0))
        session.expect(r"↻ reloaded: generation \d+ serves the next turn")
        session.line("/call version {}")
        session.expect(r'● version -> "fixed"')
        quit_cleanly(session)


def test_approving_a_call_inline(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line('/call send_alert {"city": "Oslo", "message": "snow"}')
        session.expect(r"\? Approve Send alert\?")
        session.expect(r"1\) Approve  2\) Deny")
        session.line("maybe")
        session.expect(r"Answer with y \(approve\) or n \(deny\)")
        session.line("y")
        session.expect(r"approved")
        session.expect(r'↳ \{"city":"Oslo","sent":true,"message":"snow"\}')
        session.expect(r"in this session")
        assert_no_status_line(session)  # it showed while the approval waited: not left behind by the answer
        session.line('/call send_alert {"city": "Oslo", "message": "hail"}')
        session.expect(r"\? Approve Send alert\?")
        session.line("n")
        session.expect(r"denied")
        session.expect(r"in this session")
        assert_no_status_line(session)
        quit_cleanly(session)


def test_enter_during_a_turn_steers_it(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line('/delay 250\n/say let me look that up for you\n/call get_weather {"city": "Rome"}')
        session.expect(r"Generating")
        session.line("/reply steered to the coast")
        session.expect(r"sent to the running turn")
        session.expect(r"● steered to the coast")
        turn_end = session.expect(r"in this session")
        assert "echo:" not in session.text[turn_end.start() :]
        assert_no_status_line(session)  # the steer was typed under a live status line
        quit_cleanly(session)


def test_ctrl_c_cancels_the_turn_and_twice_when_idle_quits(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line("/delay 400\n/reply one two three four five six seven eight")
        session.expect(r"Generating")
        session.send("\x03")
        session.expect(r"■ cancelled")
        assert "● one two three four five six seven eight" not in session.text
        time.sleep(0.3)
        session.send("\x03")
        session.expect(r"Press Ctrl-C again to quit")
        session.send("\x03")
        assert session.wait() == 0


def test_slash_commands(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line("/help")
        session.expect(r"/sessions")
        session.line("/info")
        session.expect(r"tools\s+get_weather, send_alert, version")
        session.expect(r"subagents\s+forecaster")
        session.line("first message")
        session.expect(r"● echo: first message")
        first = session.expect(r"(wrun_\w+) · http").group(1)
        session.line("/new")
        session.expect(rf"Session {first} retired")
        session.line("second message")
        session.expect(r"● echo: second message")
        session.line("/clear")
        session.expect(r"context cleared")
        session.line("/sessions")
        session.expect(rf"{first}\s+ended\s+[\d-]+ [\d:]+\s+“first message”")
        quit_cleanly(session)


def test_schedule_fires_one_and_follows_its_session(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line("/schedule")
        session.expect(r"Schedules: weekly-outlook")
        session.line("/schedule weekly-outlook")
        session.expect(r"Fired weekly-outlook: following wrun_\w+")
        session.expect(r"● echo: Look up the weather in Paris")
        session.line("/schedule nightly")
        session.expect(r"no schedule 'nightly'")
        quit_cleanly(session)


def test_model_switch_saves_the_provider_key_privately(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line("/model")
        session.expect(r"The agent runs on test")
        session.line("/model not a model")
        session.expect(r"is not a model id")
        session.line("/model openai/gpt-5.4-mini")
        session.expect(r"Model set to openai/gpt-5\.4-mini")
        session.expect(r"OPENAI_API_KEY is not set")
        session.expect(r"key:")
        session.send("sk-test-secret\r")
        session.expect(r"Saved the openai key in (.+config\.toml)")
        session.expect(r"↻ reloaded")
        session.line("/model test")
        session.expect(r"Model set to test")
        quit_cleanly(session)
    saved = config_home / "eve" / "config.toml"
    assert saved.stat().st_mode & 0o777 == 0o600
    assert 'api_key = "sk-test-secret"' in saved.read_text()
    assert 'model="test"' in (app / "agent" / "agent.py").read_text()
    assert "sk-test-secret" not in session.text, "a key is typed without echo"
    for log in (app / ".eve" / "logs").glob("*.log"):
        assert "sk-test-secret" not in log.read_text()


def test_quit_while_waiting_then_resume_answers_the_same_session(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line('/call send_alert {"city": "Lima", "message": "fog"}')
        session.expect(r"\? Approve Send alert\?")
        waiting = session.expect(r"(wrun_\w+) · http").group(1)
        quit_cleanly(session)
    with terminal(app, config_home) as session:  # without --resume the old session stays dormant
        session.line("/sessions")
        session.expect(rf"{waiting}\s+dormant\s+[\d-]+ [\d:]+\s+“/call send_alert")
        session.expect(r"eve dev --resume")
        quit_cleanly(session)
    with terminal(app, config_home, "--resume") as session:
        session.expect(rf"Resumed session {waiting}", anywhere=True)
        session.expect(r"1\) Approve  2\) Deny", anywhere=True)
        session.line("y")
        session.expect(r'↳ \{"city":"Lima","sent":true,"message":"fog"\}')
        session.expect(r"in this session")
        quit_cleanly(session)


def test_a_message_to_a_dormant_session_is_refused_without_a_stale_status_line(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as session:
        session.line("hello")
        session.expect(r"● echo: hello")
        first = session.expect(r"(wrun_\w+) · http").group(1)
        quit_cleanly(session)
    with terminal(app, config_home) as session:  # without --resume: the session is dormant
        session.line(f"/sessions {first}")
        session.expect(rf"Switched to {first} \(dormant: .*eve dev --resume")
        session.expect(r"● echo: hello")  # its history replays
        session.line("are you there?")
        session.expect(r"dormant\. Restart with 'eve dev\s+--resume'")  # the server's 409, said plainly
        assert_no_status_line(session)
        session.line("/new")
        session.line("a fresh start")
        session.expect(r"● echo: a fresh start")
        assert_no_status_line(session)
        quit_cleanly(session)


def test_a_second_eve_dev_attaches_to_the_running_server(app: Path, config_home: Path) -> None:
    with terminal(app, config_home) as first:
        record = read_record(app)
        assert record is not None
        with terminal(app, config_home) as second:
            assert record.url in second.text
            second.expect(rf"Attached to the eve dev already running for this app \(pid {record.pid}\)", anywhere=True)
            second.line("from the second terminal")
            second.expect(r"● echo: from the second terminal")
            quit_cleanly(second)
            second.expect(rf"Detached\. The eve dev of pid {record.pid} keeps serving")
        first.line("still serving")
        first.expect(r"● echo: still serving")
        quit_cleanly(first)


def test_no_ui_in_a_terminal_only_serves_and_logs(app: Path, config_home: Path) -> None:
    env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(config_home)}
    session = PtySession([EVE, "dev", "--port", "0", "--no-ui"], cwd=app, env=env)
    try:
        session.expect(r"eve listening on http://127\.0\.0\.1:\d+")
        assert "INFO eve_runtime" in session.text  # logs on the terminal, and no prompt
        assert " · /help" not in session.text
        session.send("\x03")  # SIGINT: the terminal is not in raw mode
        assert session.wait() == 0
    finally:
        session.close()


def test_a_command_that_fails_says_why_and_the_ui_goes_on(app: Path, config_home: Path) -> None:
    config_home.mkdir()
    (config_home / "eve").mkdir()
    (config_home / "eve" / "config.toml").write_text("providers = [")  # a broken user config
    with terminal(app, config_home) as session:
        session.line("/model openai/gpt-5.4-mini")
        session.expect(r"OPENAI_API_KEY is not set")
        session.expect(r"key:")
        session.send("sk-x\r")
        session.expect(r"That did not work: ")
        session.expect(r"is\s+not\s+valid\s+TOML")
        record = read_record(app)
        assert record is not None
        before = httpx.get(f"{record.url}/eve/v1/dev/build").json()["generation"]
        session.line("/model test")  # back to the offline model before talking to it
        session.expect(r"Model set to test")
        deadline = time.monotonic() + 20
        # Served again: a generation newer than the one before `/model test` (the reload to the openai
        # model may land after `before` was read, still serving that model) with the test model.
        while not (
            httpx.get(f"{record.url}/eve/v1/dev/build").json()["generation"] > before
            and httpx.get(f"{record.url}/eve/v1/info").json()["agent"]["model"]["id"] == "test"
        ):
            assert time.monotonic() < deadline, "the test model never came back"
            time.sleep(0.05)
        session.line("still here?")
        session.expect(r"● echo: still here\?")
        quit_cleanly(session)
