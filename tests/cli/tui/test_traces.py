"""Reading a raising tool's traceback back from the dev log (`/trace`)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from eve_cli.tui.traces import tool_traces, trace_lines

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # eve dev's log file (eve_cli.commands.start)


def _log_with_a_raising_tool(tmp_path: Path) -> str:
    app = tmp_path / "app"
    (app / "agent" / "tools").mkdir(parents=True)
    source = app / "agent" / "tools" / "explode.py"
    source.write_text("def explode(city):\n    x = 1\n    raise ValueError(f'no weather for {city}')\n")
    namespace: dict[str, object] = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    log_file = tmp_path / "dev.log"
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger = logging.getLogger("eve.tools")
    logger.addHandler(handler)
    try:
        logging.getLogger("eve.engine").addHandler(handler)
        logging.getLogger("eve.engine").warning("something else")
        try:
            namespace["explode"]("Oslo")  # type: ignore[operator]
        except ValueError as exc:
            logger.warning("the tool %s raised %s (call %s)", "explode", "ValueError", "call_1", exc_info=exc)
        logging.getLogger("eve.engine").warning("after it")
    finally:
        logger.removeHandler(handler)
        logging.getLogger("eve.engine").removeHandler(handler)
        handler.close()
    return log_file.read_text()


def test_a_raising_tool_is_found_with_its_traceback_and_its_line(tmp_path: Path) -> None:
    (trace,) = tool_traces(_log_with_a_raising_tool(tmp_path))
    assert (trace.tool, trace.error, trace.call_id) == ("explode", "ValueError", "call_1")
    assert trace.traceback[0] == "Traceback (most recent call last):"
    assert trace.traceback[-1] == "ValueError: no weather for Oslo"
    assert not any("after it" in line for line in trace.traceback)  # the next record ends it
    assert trace.where(tmp_path / "app") == "agent/tools/explode.py:3"


def test_the_traceback_reads_with_the_apps_frames_marked(tmp_path: Path) -> None:
    (trace,) = tool_traces(_log_with_a_raising_tool(tmp_path))
    lines = trace_lines(trace, tmp_path / "app")
    assert lines[0] == "[bold]explode[/] raised [red]ValueError[/] at agent/tools/explode.py:3"
    own = [line for line in lines if "explode.py" in line and "File" in line]
    assert own and all(line.startswith("[bold]") for line in own)
    assert lines[-1] == "[red]ValueError: no weather for Oslo[/]"
    assert any(re.match(r"\[dim\]  File .*test_traces\.py", line) for line in lines)  # not the app's: dim


def test_a_log_without_raising_tools_has_none() -> None:
    assert tool_traces("2026-01-01 00:00:00,000 INFO eve.serve: eve listening\n") == []
