"""Markdown files with a YAML frontmatter block (skills, schedules)."""

from __future__ import annotations

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
    import yaml  # only markdown with frontmatter needs it

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        raise FrontmatterError(f"the frontmatter is not valid YAML: {exc}", line) from None
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter must be a mapping of 'key: value' lines", 2)
    return MarkdownDocument(frontmatter={str(k): v for k, v in data.items()}, body=body, has_frontmatter=True)
