"""Markdown files with a YAML frontmatter block (skills, schedules).

Most frontmatter is a few `key: text` lines (`description: ...`, `cron: "0 8 * * 1"`). Those
are read here without PyYAML, whose import (its resolver's and scanner's regexes) costs more
than the rest of reading a skill: `eve info` on the template paid about 15 ms for it. Anything
else, or anything YAML could read as other than that text (`yes`, `null`, `a: b: c`, a
comment, an escape, a non-ASCII character), goes to `yaml.safe_load` as before; a test holds
the two to the same answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FrontmatterError", "MarkdownDocument", "parse_markdown"]


class FrontmatterError(ValueError):
    """The frontmatter block is not valid YAML mapping; `line` is 1-based within the file."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class MarkdownDocument:
    """A markdown file split into its frontmatter mapping and its body."""

    frontmatter: dict[str, Any]
    body: str
    has_frontmatter: bool


_SIMPLE_LINE = re.compile(
    r"(?P<key>[A-Za-z_][A-Za-z0-9_-]*): +"
    r"(?:\"(?P<double>[ !#-\[\]-~]*)\"|'(?P<single>[ -&(-~]*)'|(?P<plain>[A-Za-z][ -\"$-9;-~]*?)) *\r?"
)
"""One `key: value` line whose value YAML reads as that very text: double-quoted without escapes,
single-quoted without quotes, or plain, starting with a letter, with neither `#` nor `:`."""

_NOT_TEXT = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})
"""Plain words YAML 1.1 (PyYAML) reads as a bool or None, lowercased (as keys too: `on:` is True)."""


def _simple_mapping(block: str) -> dict[str, Any] | None:
    """The block's mapping when every line is a simple `key: text` line, else None (PyYAML decides)."""
    mapping: dict[str, Any] = {}
    for line in block.removesuffix("\n").split("\n"):
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        key, plain = match["key"], match["plain"]
        if key.lower() in _NOT_TEXT or (plain is not None and plain.lower() in _NOT_TEXT):
            return None
        mapping[key] = (
            plain if plain is not None else match["double"] if match["double"] is not None else match["single"]
        )
    return mapping


def parse_markdown(text: str) -> MarkdownDocument:
    """Split `---`-delimited YAML frontmatter from the markdown body.

    Raises:
        FrontmatterError: The block is not closed, is not valid YAML, or is not a mapping.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return MarkdownDocument(frontmatter={}, body=text, has_frontmatter=False)
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise FrontmatterError("the frontmatter block opened with '---' on line 1 is never closed with '---'", 1)
    simple = _simple_mapping(block) if block.strip() else None
    if simple is not None:
        return MarkdownDocument(frontmatter=simple, body=body, has_frontmatter=True)
    import yaml  # only frontmatter beyond simple `key: text` lines needs it

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        raise FrontmatterError(f"the frontmatter is not valid YAML: {exc}", line) from None
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter must be a mapping of 'key: value' lines", 2)
    return MarkdownDocument(frontmatter={str(k): v for k, v in data.items()}, body=body, has_frontmatter=True)
