"""Frontmatter read without PyYAML gives PyYAML's answer, and anything else still goes to PyYAML."""

from __future__ import annotations

import random

import pytest
import yaml

from eve_runtime.project.frontmatter import FrontmatterError, _simple_mapping, parse_markdown

EDGES = [
    'cron: "0 8 * * 1"\n',
    "description: Plan a day or an outing around the weather, hour by hour.\n",
    "name: it's a [list] {or} not, & *so* !on\n",
    "a: b\na: c\n",  # a repeated key: the last one wins, in both
    "key: 'single # not a comment'\r\n",
    'key: ""\n',
    "allowed-tools: bash read_file\n",
    "trailing: spaces   \n",
    "back: C:\\path\n",
    "yes: sure\n",
    "on: x\n",
    "enabled: true\n",
    "enabled: Off\n",
    "empty: null\n",
    "empty:\n",
    "count: 3\n",
    "version: 1.0\n",
    "when: 2026-12-01\n",
    "tag: C# and F#\n",
    "nested: a: b\n",
    "  indented: x\n",
    "list:\n  - a\n",
    'escaped: "a\\nb"\n',
    "# a comment\nkey: v\n",
    "key: v # a comment\n",
    "unicode: café\n",
    "tab:\tx\n",
    "key: v\n\nother: w\n",
    "~: tilde\n",
]


@pytest.mark.parametrize("block", EDGES)
def test_the_edges_read_as_pyyaml_reads_them(block: str) -> None:
    simple = _simple_mapping(block)
    if simple is not None:
        assert simple == yaml.safe_load(block)


def test_the_simple_lines_skip_pyyaml_and_the_rest_do_not() -> None:
    assert _simple_mapping('cron: "0 8 * * 1"\n') == {"cron": "0 8 * * 1"}
    assert _simple_mapping("description: Plan a day, hour by hour.\n") == {"description": "Plan a day, hour by hour."}
    for block in ("enabled: true\n", "on: x\n", "count: 3\n", "key: v # c\n", "list:\n  - a\n", "unicode: café\n"):
        assert _simple_mapping(block) is None, block


ATOMS = [
    "a", "Z", "x1", "-", "_", " ", "  ", "#", ":", ": ", '"', "'", "\\", ",", "[", "]", "{", "}", "!", "&", "*",
    "%", "@", "`", "|", ">", "?", "~", "0", "7", ".", "yes", "No", "on", "OFF", "null", "true", "é", "\t", "\r",
]  # fmt: skip


def _fragment(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(ATOMS) for _ in range(rng.randint(0, size)))


def test_random_near_misses_read_as_pyyaml_reads_them() -> None:
    rng = random.Random(20261201)
    simple_seen = 0
    for _ in range(10000):
        lines = []
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(["name", "description", "cron", "on", "Yes", "a-b", "_k", "k1", _fragment(rng, 3)])
            value = _fragment(rng, 6)
            quote = rng.choice(["", "", '"', "'"])
            space, end = rng.choice([" ", "  ", ""]), rng.choice(["", " ", "\r"])
            lines.append(f"{key}:{space}{quote}{value}{quote}{end}\n")
        block = "".join(lines)
        simple = _simple_mapping(block)
        if simple is None:
            continue
        simple_seen += 1
        assert simple == yaml.safe_load(block), repr(block)
    assert simple_seen > 500  # the generator does reach the fast path


def test_parse_markdown_reads_both_ways_and_reports_errors_as_before() -> None:
    simple = parse_markdown('---\ncron: "0 8 * * 1"\n---\nbody\n')
    assert simple.frontmatter == {"cron": "0 8 * * 1"} and simple.body == "body\n" and simple.has_frontmatter
    full = parse_markdown("---\nmetadata:\n  owner: me\nenabled: true\n---\nbody\n")
    assert full.frontmatter == {"metadata": {"owner": "me"}, "enabled": True}
    with pytest.raises(FrontmatterError, match="not valid YAML"):
        parse_markdown("---\nkey: [unclosed\n---\n")
    with pytest.raises(FrontmatterError, match="must be a mapping"):
        parse_markdown("---\njust text\n---\n")
