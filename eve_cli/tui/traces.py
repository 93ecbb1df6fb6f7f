"""The tracebacks of tools that raised, read back from `eve dev`'s log file (the UI's `/trace`).

The runtime logs a raising tool as one record of logger `eve.tools`,
`the tool NAME raised ERROR (call CALL_ID)`, followed by its traceback; a record ends where the
next one starts (a line that begins with the log's timestamp).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ToolTrace", "tool_traces", "trace_lines"]

_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
_RAISED = re.compile(r"eve\.tools: the tool (?P<tool>\S+) raised (?P<error>\S+) \(call (?P<call>[^)]+)\)")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class ToolTrace:
    """One raising tool call as the log tells it."""

    tool: str
    error: str
    call_id: str
    traceback: list[str]
    """The traceback's lines, `Traceback (most recent call last):` first."""

    def where(self, app_root: Path) -> str | None:
        """`path:line` of the innermost frame in the app's code (relative to `app_root`), if any."""
        found = None
        for line in self.traceback:
            match = _FRAME.match(line)
            if match is not None and Path(match["file"]).is_relative_to(app_root):
                found = f"{Path(match['file']).relative_to(app_root)}:{match['line']}"
        return found


def tool_traces(log: str) -> list[ToolTrace]:
    """Every raising tool call in a log's text, oldest first."""
    traces: list[ToolTrace] = []
    current: ToolTrace | None = None
    for line in log.splitlines():
        if _RECORD.match(line):
            current = None
            match = _RAISED.search(line)
            if match is not None:
                current = ToolTrace(match["tool"], match["error"], match["call"], [])
                traces.append(current)
        elif current is not None:
            current.traceback.append(line)
    return traces


def trace_lines(trace: ToolTrace, app_root: Path) -> list[str]:
    """A traceback as rich markup: the app's own frames bold, the rest dim."""
    from rich.markup import escape

    where = trace.where(app_root)
    at = f" at {escape(where)}" if where else ""
    lines = [f"[bold]{escape(trace.tool)}[/] raised [red]{escape(trace.error)}[/]{at}"]
    own = False
    for line in trace.traceback:
        match = _FRAME.match(line)
        if match is not None:
            own = Path(match["file"]).is_relative_to(app_root)
        elif not line.startswith(" "):  # the header, a chained cause's note, the exception itself
            own = False
            if line and not line.startswith("Traceback") and trace.error in line:
                lines.append(f"[red]{escape(line)}[/]")
                continue
        lines.append(f"[bold]{escape(line)}[/]" if own else f"[dim]{escape(line)}[/]")
    return lines
