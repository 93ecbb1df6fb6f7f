"""Glob patterns as ripgrep reads them, for the files of a sandbox tree (walked by `tree_files.walk_folder`).

A pattern without `/` matches a file's name at any depth (`*.py`); one with `/` matches its path
from the search folder (`src/**/*.ts`). `**` spans folders, `*` and `?` stay within one,
`[abc]` and `[!abc]` are classes, `{a,b}` are alternatives. `.git` folders are skipped; hidden
files are included, as `rg --hidden` does; symbolic links are not followed.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["SKIPPED", "GlobPattern"]

SKIPPED = frozenset({".git"})
"""Folders a search never enters."""


def _braces(pattern: str) -> list[str]:
    """`a{b,c}d` as `abd`, `acd` (nested braces too)."""
    depth = 0
    start = -1
    for index, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                options, level, current = [], 0, ""
                for inner in pattern[start + 1 : index]:
                    if inner == "," and level == 0:
                        options.append(current)
                        current = ""
                        continue
                    level += inner == "{"
                    level -= inner == "}"
                    current += inner
                options.append(current)
                head, tail = pattern[:start], pattern[index + 1 :]
                return [expanded for option in options for expanded in _braces(head + option + tail)]
    return [pattern]


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("/**", index) and index + 3 == len(pattern):
            out.append("(?:/.*)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end == -1:
                out.append(re.escape(char))
                index += 1
                continue
            body = pattern[index + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


@cache
def _compiled(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    alternatives = [_translate(p.lstrip("/")) for p in _braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.IGNORECASE if ignore_case else 0)


class GlobPattern:
    """One glob, matched against paths relative to the search folder."""

    def __init__(self, pattern: str, *, ignore_case: bool = False) -> None:
        if not pattern or not pattern.strip():
            raise ValueError("the glob pattern is empty")
        self.pattern = pattern
        self.by_name = "/" not in pattern.strip("/")
        self._regex = _compiled(pattern, ignore_case)

    def matches(self, relative: str) -> bool:
        """Whether a file (its `/`-separated path relative to the search folder) matches."""
        target = relative.rsplit("/", 1)[-1] if self.by_name else relative
        return self._regex.match(target) is not None
