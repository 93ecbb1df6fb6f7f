"""The framework's opt-in `glob` and `grep` tools (turned on by `from eve_runtime.framework_tools import glob`).

`glob {"pattern", "path"?, "limit"?}` returns `{"content", "count", "path", "truncated"}`: the
matching files, one absolute path a line, sorted, 100 by default (at most 1000).

`grep {"pattern", "path"?, "glob"?, "ignoreCase"?, "literal"?, "context"?, "limit"?}` returns
`{"content", "matchCount", "path", "truncated"}`: `path:line:text` for each matching line and
`path-line-text` for context lines, groups separated by `--`, at most `limit` matches (100) per
file. Binary files are skipped. The regular expressions are Python's (close to ripgrep's), run by
the `regex` engine under a time budget (20 s for the whole search): a pattern that backtracks
without end (`(a|aa)+$`) fails the call instead of holding a thread for ever, and a tree too
large to search in that time gives what was found so far, marked `truncated`. glob has the same budget.

Both search `/workspace` unless `path` names another folder (or, for grep, a file) of the
sandbox, and read the workspace's files where they are on this machine.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.sandbox_session import Sandbox, SandboxError
from eve_runtime.authoring.tools import tool
from eve_runtime.sandbox.globbing import SKIPPED, GlobPattern
from eve_runtime.sandbox.tree_files import TreeFiles, walk_folder
from eve_runtime.sandbox.truncate import MAX_OUTPUT_BYTES, cap_line

if TYPE_CHECKING:
    import regex

__all__ = ["GLOB_INPUT_SCHEMA", "GREP_INPUT_SCHEMA", "glob", "grep"]

_MAX_FILE_BYTES = 20 * 1024 * 1024
SEARCH_SECONDS = 20.0
"""How long one grep's matching may take in all."""
_PATH_HELP = "Defaults to /workspace. Must be an absolute path or begin with $HOME/. Omit to use the default."

GLOB_DESCRIPTION = "\n".join(
    [
        "Fast file pattern matching tool that works with any codebase size.",
        "",
        "Usage:",
        '- Supports glob patterns like "**/*.js" or "src/**/*.ts".',
        "- Returns matching file paths.",
        "- Call this tool in parallel when you know there are multiple patterns to search for.",
    ]
)
GREP_DESCRIPTION = "\n".join(
    [
        "Fast content search tool that works with any codebase size.",
        "",
        "Usage:",
        "- Searches file contents using regular expressions.",
        '- Filter files by pattern with the glob parameter (e.g. "*.js", "*.{ts,tsx}").',
        "- Returns matching lines with file paths and line numbers.",
        "- Any line longer than 2000 characters is truncated.",
    ]
)
GLOB_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "Maximum number of results to return. Defaults to 100.",
        },
        "path": {"type": "string", "description": f"The directory to search in. {_PATH_HELP}"},
        "pattern": {
            "type": "string",
            "description": 'The glob pattern to match files against (e.g. "**/*.ts", "src/**/*.js").',
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}
GREP_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "context": {
            "type": "integer",
            "minimum": 0,
            "description": "Number of surrounding context lines to include before and after each match. Defaults to 0.",
        },
        "glob": {"type": "string", "description": 'Filter files by glob pattern (e.g. "*.ts", "*.{ts,tsx}").'},
        "ignoreCase": {"type": "boolean", "description": "Perform case-insensitive search. Defaults to false."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "Maximum number of matches to return per file. Defaults to 100.",
        },
        "literal": {
            "type": "boolean",
            "description": "Treat the pattern as a literal string instead of a regular expression. Defaults to false.",
        },
        "path": {"type": "string", "description": f"The directory or file to search in. {_PATH_HELP}"},
        "pattern": {
            "type": "string",
            "description": "The regex pattern to search for in file contents "
            '(e.g. "log.*Error", "function\\\\s+\\\\w+").',
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class _Root:
    """Where a search starts: a folder (or, for grep, one file) of one of the sandbox's trees."""

    display: str
    tree: TreeFiles
    relative: str

    def folder(self) -> int:
        return self.tree.open_folder(self.relative, self.display)

    def files(self, matcher: GlobPattern | None) -> Generator[tuple[str, bytes | None], None, None]:
        """Each matching file (its path relative to the root, its bytes or None: skipped), links not followed."""
        try:
            fd = self.folder()
        except NotADirectoryError:
            name = self.display.rsplit("/", 1)[-1]
            if matcher is None or matcher.matches(name):
                yield name, self.tree.read(self.relative, self.display, limit=_MAX_FILE_BYTES)
            return
        try:
            for relative, folder, name in walk_folder(fd, SKIPPED):
                if matcher is None or matcher.matches(relative):
                    yield relative, self.tree.read_in(folder, name, self.display, _MAX_FILE_BYTES)
        finally:
            os.close(fd)


def _root(sandbox: Sandbox, path: str | None) -> _Root:
    from eve_runtime.sandbox.handle import HostSandbox  # the live sandbox: compiling the tool never needs it

    if not isinstance(sandbox, HostSandbox):
        raise SandboxError("this sandbox's files are not on this machine, so glob and grep cannot search them")
    where = sandbox.resolved(path or "/workspace")
    return _Root(where.display, sandbox.trees[where.tree], where.relative)


def _glob(root: _Root, pattern: str, limit: int) -> dict[str, Any]:
    display = root.display
    matcher = GlobPattern(pattern)
    found: list[str] = []
    size = 0
    truncated = stopped = False
    deadline = time.monotonic() + SEARCH_SECONDS
    folder = root.folder()
    try:
        for relative, _, _ in walk_folder(folder, SKIPPED):
            if time.monotonic() > deadline:
                truncated = stopped = True
                break
            if not matcher.matches(relative):
                continue
            line = f"{display}/{relative}"
            if len(found) >= limit or (size + len(line) + 1 > MAX_OUTPUT_BYTES and found):
                truncated = True
                break
            found.append(line)
            size += len(line) + 1
    finally:
        os.close(folder)
    if stopped:
        note = f"(Search stopped after {SEARCH_SECONDS:g} s: a very large tree. Use a more specific path or pattern.)"
        return {"content": "\n".join([*found, "", note]), "count": len(found), "path": display, "truncated": True}
    if not found:
        return {"content": "No files found", "count": 0, "path": display, "truncated": False}
    lines = list(found)
    if truncated:
        lines += [
            "",
            f"(Results truncated: showing first {len(found)} results out of more. "
            "Use a more specific path or pattern to narrow results.)",
        ]
    return {"content": "\n".join(lines), "count": len(found), "path": display, "truncated": truncated}


@tool(description=GLOB_DESCRIPTION)
async def glob(
    pattern: Annotated[
        str, Field(description='The glob pattern to match files against (e.g. "**/*.ts", "src/**/*.js").')
    ],
    ctx: ToolContext,
    path: Annotated[str | None, Field(description=f"The directory to search in. {_PATH_HELP}")] = None,
    limit: Annotated[
        int | None, Field(ge=1, le=1000, description="Maximum number of results to return. Defaults to 100.")
    ] = None,
) -> dict[str, Any]:
    """Find sandbox files by glob pattern."""
    import asyncio

    root = _root(await ctx.get_sandbox(), path)
    return await asyncio.to_thread(_glob, root, pattern, limit or 100)


class _Output:
    """Lines up to the 50 KiB budget."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.full = False

    def add(self, line: str) -> bool:
        cost = len(line.encode("utf-8")) + 1
        if self.size + cost > MAX_OUTPUT_BYTES and self.lines:
            self.full = True
            return False
        self.lines.append(line)
        self.size += cost
        return True


def _file_lines(data: bytes | None) -> list[str] | None:
    """A text file's lines; None for a binary, unreadable or huge file (skipped, as ripgrep does)."""
    if data is None:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _matching_lines(pattern: regex.Pattern[str], lines: list[str], deadline: float, limit: int) -> list[int]:
    """The indexes of the first `limit` lines with a match, searched in the whole text (one call per hit).

    The pattern is compiled with MULTILINE, so `^` and `$` mean what they mean on one line. After
    a hit the search goes on at the next line; a match that crosses a line break does not count,
    and its first line is tried alone.
    """
    if not lines:
        return []
    text = "\n".join(lines)
    hits: list[int] = []
    position = line = line_start = 0

    def budget() -> float:
        return max(deadline - time.monotonic(), 0.001)

    try:
        while len(hits) < limit and position <= len(text):
            match = pattern.search(text, position, timeout=budget())
            if match is None:
                break
            line += text.count("\n", line_start, match.start())
            line_start = text.rfind("\n", 0, match.start()) + 1
            line_end = text.find("\n", match.start())
            line_end = len(text) if line_end == -1 else line_end
            if match.end() <= line_end or pattern.search(lines[line], timeout=budget()):
                hits.append(line)
            position = line_start = line_end + 1
            line += 1
    except TimeoutError:
        raise TimeoutError(
            f"grep: matching {pattern.pattern!r} took longer than {SEARCH_SECONDS:g} s; "
            "simplify the pattern (nested repetition such as (a+)+ backtracks for ever) or narrow the path"
        ) from None
    return hits


def _grep(root: _Root, pattern: regex.Pattern[str], file_glob: str | None, context: int, limit: int) -> dict[str, Any]:
    display = root.display
    deadline = time.monotonic() + SEARCH_SECONDS
    matcher = GlobPattern(file_glob) if file_glob else None
    single = not root.tree.is_folder(root.relative, display)
    out = _Output()
    matches = 0
    by_limit = False
    stopped = False
    with contextlib.closing(root.files(matcher)) as files:
        for relative, data in files:
            if out.full:
                break
            if time.monotonic() > deadline:
                stopped = True
                break
            lines = _file_lines(data)
            if lines is None:
                continue
            hits = _matching_lines(pattern, lines, deadline, limit)
            if not hits:
                continue
            by_limit = by_limit or len(hits) >= limit
            matches += len(hits)
            name = display if single else f"{display}/{relative}"
            hit_set = set(hits)
            shown = sorted({j for i in hits for j in range(max(0, i - context), min(len(lines), i + context + 1))})
            previous: int | None = None
            for j in shown:
                if context and previous is not None and j != previous + 1 and not out.add("--"):
                    break
                mark = ":" if j in hit_set else "-"
                if not out.add(f"{name}{mark}{j + 1}{mark}{cap_line(lines[j])}"):
                    break
                previous = j
    if not out.lines and not stopped:
        return {"content": "No matches found", "matchCount": 0, "path": display, "truncated": False}
    notices = []
    if stopped:
        notices.append(f"Search stopped after {SEARCH_SECONDS:g} s. Use a more specific path or glob.")
    if by_limit:
        notices.append(f"Match limit reached ({limit}). Use a larger limit or more specific pattern.")
    if out.full:
        notices.append("Output truncated due to size. Use a more specific path or pattern.")
    content = ("\n".join(out.lines) or "No matches found so far") + (f"\n\n[{' '.join(notices)}]" if notices else "")
    return {"content": content, "matchCount": matches, "path": display, "truncated": bool(notices)}


@tool(description=GREP_DESCRIPTION)
async def grep(
    pattern: Annotated[str, Field(description="The regex pattern to search for in file contents.")],
    ctx: ToolContext,
    path: Annotated[str | None, Field(description=f"The directory or file to search in. {_PATH_HELP}")] = None,
    glob: Annotated[str | None, Field(description="Filter files by glob pattern.")] = None,
    ignoreCase: Annotated[bool | None, Field(description="Perform case-insensitive search.")] = None,
    literal: Annotated[bool | None, Field(description="Treat the pattern as a literal string.")] = None,
    context: Annotated[int | None, Field(ge=0, description="Context lines before and after each match.")] = None,
    limit: Annotated[int | None, Field(ge=1, le=1000, description="Maximum number of matches per file.")] = None,
) -> dict[str, Any]:
    """Search sandbox file contents with a regular expression."""
    import asyncio

    import regex  # imported when a search runs: compiling an app (`eve info`) never needs it

    try:
        flags = regex.MULTILINE | (regex.IGNORECASE if ignoreCase else 0)
        compiled = regex.compile(regex.escape(pattern) if literal else pattern, flags)
    except regex.error as exc:
        raise ValueError(f"grep: {pattern!r} is not a valid regular expression: {exc}") from None
    root = _root(await ctx.get_sandbox(), path)
    return await asyncio.to_thread(_grep, root, compiled, glob, context or 0, limit or 100)
