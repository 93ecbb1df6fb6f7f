"""A newcomer's first session, end to end in a real pseudo-terminal, as the README walks it.

`eve init`, `eve dev`, a chat, a tool, an approval, a broken save and its fix, a tool that raises
and its traceback, `/quit` while the agent waits for an answer, and `eve dev --resume` to answer
it. After every step the screen (read through a terminal emulator, scrollback included) must hold
no status line left behind by a redraw.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.test_dev_tui import EVE, assert_no_status_line, quit_cleanly, terminal

pytestmark = pytest.mark.scenario

RAISES = '''
def explode(city: str) -> str:
    """Fail the way a bug does."""
    raise ValueError(f"no weather for {city}")
'''


def test_a_newcomers_first_session(tmp_path: Path) -> None:
    done = subprocess.run([EVE, "init", "weather", "-n"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "eve dev" in done.stdout.split("Next steps:")[1].splitlines()[2]
    app, config_home = tmp_path / "weather", tmp_path / "config"
    tool = app / "agent" / "tools" / "get_weather.py"
    good = tool.read_text()

    with terminal(app, config_home) as session:
        session.line("hello")
        session.expect(r"● echo: hello")
        session.expect(r"this turn: \d+ in / \d+ out tokens")
        assert_no_status_line(session)

        session.line('/call get_weather {"city": "Paris"}')
        session.expect(r'↳ \{"city":"Paris","condition":"Sunny","temperatureF":72\}')
        session.expect(r"in this session")

        session.line('/call send_alert {"city": "Oslo", "message": "snow"}')
        session.expect(r"\? Approve Send alert\?")
        session.expect(r"1\) Approve  2\) Deny")
        session.line("y")
        session.expect(r"approved")
        session.expect(r'↳ \{"city":"Oslo","sent":true,"message":"snow"\}')
        session.expect(r"in this session")
        assert_no_status_line(session)

        tool.write_text("def get_weather(city: str) -> dict:\n    return {\n")  # a save in the middle of an edit
        session.expect(r"✗ the agent has errors: generation \d+ keeps serving")
        session.expect(r"agent/tools/get_weather\.py:\d+")
        tool.write_text(good)
        session.expect(r"↻ reloaded")
        (app / "agent" / "tools" / "explode.py").write_text(RAISES)
        session.expect(r"↻ reloaded")

        session.line('/call explode {"city": "Rome"}')
        session.expect(r"failed: ValueError: no weather for Rome")
        session.expect(r"/trace shows where")
        session.expect(r"in this session")
        session.line("/trace")
        session.expect(r"explode raised ValueError at agent/tools/explode\.py:4")
        session.expect(r'raise ValueError\(f"no weather for \{city\}"\)')

        session.line('/call send_alert {"city": "Lima", "message": "fog"}')
        session.expect(r"\? Approve Send alert\?")
        waiting = session.expect(r"(wrun_\w+) · http").group(1)
        quit_cleanly(session)
        session.expect(r"eve dev --resume")
        assert_no_status_line(session)

    with terminal(app, config_home, "--resume") as session:
        session.expect(rf"Resumed session {waiting}", anywhere=True)
        session.expect(r"1\) Approve  2\) Deny", anywhere=True)
        session.line("y")
        session.expect(r'↳ \{"city":"Lima","sent":true,"message":"fog"\}')
        session.expect(r"in this session")
        assert_no_status_line(session)
        quit_cleanly(session)
