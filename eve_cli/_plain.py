"""Styled text for `eve info` without rich: spans, word wrapping, a two-column grid and a table.

rich's import and its table layout were a fifth of `eve info`'s time for a page of text. This
draws the same page: a grid of labels and values, and tables in rich's "heavy head" box without
edges, their cells wrapped at word boundaries to fit the width (a word longer than its column is
folded). Styles become ANSI codes only when the output is a colour terminal, as rich decides it:
`FORCE_COLOR` set, or a terminal whose `TERM` is not `dumb` and no `NO_COLOR`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

__all__ = ["Cell", "Page", "Span", "uses_color"]

Span = tuple[str, str]
"""A run of text and its style: space-separated names of `STYLES` ("" for none)."""
Cell = Sequence[Span]

STYLES = {"bold": "1", "dim": "2", "italic": "3", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
TOKENS = re.compile(r"\s+|\S+")


def uses_color(stream: object = None) -> bool:
    """Whether styles are drawn: on a colour terminal, as rich decides it."""
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR") is not None or os.environ.get("TERM", "") in ("dumb", "unknown"):
        return False
    isatty = getattr(stream if stream is not None else sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _length(cell: Cell) -> int:
    return sum(len(text) for text, _style in cell)


def _longest_word(cell: Cell) -> int:
    return max((len(word) for text, _style in cell for word in text.split()), default=0)


def wrap(cell: Cell, width: int) -> list[list[Span]]:
    """The cell's lines at `width`: broken between words, a word longer than the width folded."""
    lines: list[list[Span]] = [[]]
    used = 0
    space: Span | None = None
    for text, style in cell:
        for token in TOKENS.findall(text):
            if token.isspace():
                space = (" ", style)
                continue
            if space is not None and used and used + 1 + len(token) <= width:
                lines[-1].append((" ", space[1]))
                used += 1
            elif used:
                lines.append([])
                used = 0
            space = None
            while used + len(token) > width > 0:  # longer than the column: folded
                room = width - used
                lines[-1].append((token[:room], style))
                lines.append([])
                used, token = 0, token[room:]
            lines[-1].append((token, style))
            used += len(token)
    return lines


def fitted(natural: list[int], least: list[int], room: int) -> list[int]:
    """Column widths that fit `room`: the widest narrowed first, to its longest word, then below."""
    widths = list(natural)
    for floor in (least, [1] * len(widths)):
        while sum(widths) > room:
            wider = [i for i, width in enumerate(widths) if width > floor[i]]
            if not wider:
                break
            widest = max(wider, key=lambda i: widths[i])
            widths[widest] -= 1
    return widths


class Page:
    """Lines of styled text, drawn with or without ANSI codes."""

    def __init__(self, width: int, color: bool) -> None:
        self.width = width
        self.color = color
        self._lines: list[str] = []

    def text(self) -> str:
        """Everything drawn so far, one line each."""
        return "".join(line + "\n" for line in self._lines)

    def _draw(self, spans: Sequence[Span]) -> str:
        if not self.color:
            return "".join(text for text, _style in spans)
        merged: list[list[str]] = []
        for text, style in spans:  # one code for a run of one style, its spaces included
            if merged and merged[-1][1] == style:
                merged[-1][0] += text
            else:
                merged.append([text, style])
        drawn = []
        for text, style in merged:
            codes = ";".join(STYLES[name] for name in style.split())
            drawn.append(f"\x1b[{codes}m{text}\x1b[0m" if codes and text else text)
        return "".join(drawn)

    def line(self, *spans: Span, indent: int = 0) -> None:
        """One line of text, wrapped at the page's width, every line of it after `indent` spaces."""
        for wrapped in wrap(spans, max(self.width - indent, 1)):
            self._lines.append(" " * indent + self._draw(wrapped))

    def blank(self) -> None:
        """An empty line."""
        self._lines.append("")

    def grid(self, rows: Sequence[tuple[str, Cell]], *, gap: int = 2) -> None:
        """Bold labels in one column, their values wrapped beside them."""
        label_width = max((len(label) for label, _value in rows), default=0)
        room = max(self.width - label_width - gap, 1)
        for label, value in rows:
            for index, wrapped in enumerate(wrap(value, room)):
                head = [(label.ljust(label_width), "bold")] if index == 0 else [(" " * label_width, "")]
                self._lines.append(self._draw([*head, (" " * gap, ""), *wrapped]).rstrip())

    def table(self, title: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
        """A titled table: a bold header over `━`, columns split by `│`, no outer edge."""
        header_cells: list[Cell] = [[(header, "bold")] for header in headers]
        cells = [header_cells, *[list(row) for row in rows]]
        natural = [max(_length(row[i]) for row in cells) for i in range(len(headers))]
        least = [max(_longest_word(row[i]) for row in cells) for i in range(len(headers))]
        widths = fitted(natural, least, self.width - 3 * len(headers) + 1)
        self._lines.append(self._draw([(title, "italic")]))
        self._row(header_cells, widths, "┃")
        self._lines.append("╇".join("━" * (width + 2) for width in widths))
        for row in cells[1:]:
            self._row(row, widths, "│")

    def _row(self, row: Sequence[Cell], widths: list[int], bar: str) -> None:
        columns = [wrap(cell, width) for cell, width in zip(row, widths, strict=True)]
        for index in range(max(len(lines) for lines in columns)):
            parts = []
            for lines, width in zip(columns, widths, strict=True):
                spans = lines[index] if index < len(lines) else []
                parts.append(self._draw(spans) + " " * (width - _length(spans)))
            self._lines.append((" " + f" {bar} ".join(parts)).rstrip())
