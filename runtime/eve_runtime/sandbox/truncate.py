"""Output budgets shared by the framework tools, as eve sets them: 2000 lines, 50 KiB, 2000 characters a line.

Whatever a framework tool returns is what the model reads, so each bounds its output at the
source: file contents, search results and fetched pages keep their beginning (`head`), command
output keeps its end (`tail`), where errors and results usually are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["MAX_LINE_LENGTH", "MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "Truncated", "cap_line", "truncate"]

MAX_OUTPUT_LINES = 2000
MAX_OUTPUT_BYTES = 50 * 1024
MAX_LINE_LENGTH = 2000
LINE_SUFFIX = " [truncated]"


@dataclass(frozen=True)
class Truncated:
    """A text cut to the budget."""

    output: str
    truncated: bool
    total_lines: int
    output_lines: int


def cap_line(line: str) -> str:
    """A line cut at 2000 characters, marked when it was."""
    return line if len(line) <= MAX_LINE_LENGTH else line[:MAX_LINE_LENGTH] + LINE_SUFFIX


def truncate(text: str, keep: Literal["head", "tail"]) -> Truncated:
    """The first (`head`) or last (`tail`) lines of `text` that fit 2000 lines and 50 KiB."""
    lines = text.split("\n")
    total = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
    if keep == "tail" and lines and lines[-1] == "":
        lines.pop()
    ordered = lines if keep == "head" else list(reversed(lines))
    kept: list[str] = []
    size = 0
    capped = False
    for raw in ordered:
        if len(kept) >= MAX_OUTPUT_LINES:
            break
        line = cap_line(raw)
        cost = len(line.encode("utf-8")) + 1
        if size + cost > MAX_OUTPUT_BYTES and kept:
            break
        capped = capped or line is not raw
        kept.append(line)
        size += cost
    if keep == "tail":
        kept.reverse()
    counted = min(len(kept), total)
    output = "\n".join(kept)
    if keep == "tail" and text.endswith("\n") and kept:
        output += "\n"
    return Truncated(output=output, truncated=counted < total or capped, total_lines=total, output_lines=counted)
