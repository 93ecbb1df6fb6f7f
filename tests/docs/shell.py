"""The shell commands the documentation shows, read out of its code blocks.

A `bash` or `sh` block is a script: every line is a command (a trailing `\\` continues it, `#`
starts a comment, and a line that is only a comment is the output of the command above). A
`console` block is a terminal: lines starting with `$ ` are commands, the rest is output. Each
command line splits into simple commands at `&&`, `||`, `;` and `|`; a `$(...)` substitution is
one more command, and stands as the word `SUBSTITUTED` in the command around it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SHELL_LANGUAGES", "Command", "CodeBlock", "code_blocks", "commands_of", "split_commands"]

SHELL_LANGUAGES = frozenset({"bash", "sh", "console"})
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block: its language tag, its text (indentation removed) and the line its text starts at."""

    path: Path
    language: str
    text: str
    line: int


@dataclass(frozen=True)
class Command:
    """One simple command: the environment assignments before it, its words, and where it was shown."""

    where: str
    assignments: tuple[str, ...]
    words: tuple[str, ...]

    @property
    def program(self) -> str:
        """The program the command runs (its first word)."""
        return self.words[0]

    def __str__(self) -> str:
        return shlex.join([*self.assignments, *self.words])


def code_blocks(path: Path) -> list[CodeBlock]:
    """The fenced code blocks of a markdown file, in order (indented fences, as in list items, too)."""
    blocks: list[CodeBlock] = []
    lines = path.read_text().splitlines()
    start: tuple[int, str, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        fence = _FENCE.match(line)
        if start is None:
            if fence is not None:
                start, body = (number + 1, fence.group(2), fence.group(1)), []
            continue
        if fence is not None and not fence.group(2):
            first, language, indent = start
            text = "\n".join(text[len(indent) :] if text.startswith(indent) else text.lstrip() for text in body)
            blocks.append(CodeBlock(path, language, text, first))
            start = None
            continue
        body.append(line)
    if start is not None:
        raise AssertionError(f"{path}:{start[0] - 1}: a code block is never closed")
    return blocks


def _command_lines(block: CodeBlock) -> list[tuple[int, str]]:
    """The command lines of a shell block with their line numbers, continuations joined."""
    found: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for offset, raw in enumerate(block.text.splitlines()):
        number, line = block.line + offset, raw.rstrip()
        if pending is not None:
            line, number = pending[1] + " " + line.strip(), pending[0]
            pending = None
        elif block.language == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            pending = (number, line[:-1])
            continue
        found.append((number, line))
    return found


def split_commands(line: str, where: str) -> list[Command]:
    """The simple commands of one command line (see the module docstring)."""
    commands: list[Command] = []
    for inner in _SUBSTITUTION.findall(line):
        commands.extend(split_commands(inner, where))
    lexer = shlex.shlex(_SUBSTITUTION.sub("SUBSTITUTED", line), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words: list[str] = []
    try:
        tokens = [*lexer, ";"]
    except ValueError as exc:
        raise AssertionError(f"{where}: the shell cannot read {line!r} ({exc})") from None
    for token in tokens:
        if token not in _SEPARATORS:
            words.append(token)
            continue
        assignments = []
        while words and _ASSIGNMENT.match(words[0]):
            assignments.append(words.pop(0))
        if words:
            commands.append(Command(where, tuple(assignments), tuple(words)))
        words = []
    return commands


def commands_of(path: Path) -> list[Command]:
    """Every simple command the shell blocks of a markdown file show, in order."""
    commands: list[Command] = []
    for block in code_blocks(path):
        if block.language in SHELL_LANGUAGES:
            for number, line in _command_lines(block):
                commands.extend(split_commands(line, f"{path.name}:{number}"))
    return commands
