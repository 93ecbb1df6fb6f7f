"""The README stays a five-minute read that leads with its two commands, and every link resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.checks import ROOT
from tests.docs.shell import SHELL_LANGUAGES, code_blocks, commands_of

README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings (code blocks skipped)."""
    found: set[str] = set()
    inside = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
        elif not inside and (match := _HEADING.match(line)):
            found.add(slug(match.group(1)))
    return found


def test_the_readme_is_short_and_leads_with_the_two_commands() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < 150
    first = [str(command) for command in commands_of(README)[:2]]
    assert first == ["make demo", "make test"]
    assert all(int(command.where.split(":")[1]) < 30 for command in commands_of(README)[:2])


def test_the_readme_links_every_page() -> None:
    linked = {target.split("#")[0] for target in _LINK.findall(README.read_text())}
    assert {f"docs/{page.name}" for page in PAGES} <= linked


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda path: path.name)
def test_links_resolve(path: Path) -> None:
    for target in _LINK.findall(path.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        file, _, anchor = target.partition("#")
        page = (path.parent / file).resolve() if file else path
        assert page.exists(), f"{path.name}: the link {target!r} names no file"
        if anchor and page.suffix == ".md":
            assert anchor in anchors(page), f"{path.name}: {page.name} has no heading for #{anchor}"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda path: path.name)
def test_code_blocks_name_their_language(path: Path) -> None:
    """An untagged block would hide its commands from `test_commands`."""
    for block in code_blocks(path):
        assert block.language, f"{path.name}:{block.line - 1}: tag the code block (bash, console, text, python, ...)"
        if block.language in SHELL_LANGUAGES:
            assert block.text.strip(), f"{path.name}:{block.line - 1}: an empty shell block"
