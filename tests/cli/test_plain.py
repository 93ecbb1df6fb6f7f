"""`eve_cli._plain`: the page `eve info` draws without rich."""

from __future__ import annotations

import io

import pytest

from eve_cli._plain import Page, fitted, uses_color, wrap


def _texts(lines: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(text for text, _style in line) for line in lines]


def test_words_wrap_at_the_width_and_a_long_word_is_folded() -> None:
    assert _texts(wrap([("get the current weather", "")], 11)) == ["get the", "current", "weather"]
    assert _texts(wrap([("a /very/long/path", "")], 6)) == ["a", "/very/", "long/p", "ath"]


def test_styles_follow_their_words_across_lines() -> None:
    lines = wrap([("ready", "green"), (" in 15 ms", "")], 8)
    assert lines == [[("ready", "green"), (" ", ""), ("in", "")], [("15", ""), (" ", ""), ("ms", "")]]


def test_columns_narrow_widest_first_and_keep_their_longest_word() -> None:
    assert fitted([4, 30], [4, 10], 40) == [4, 30]  # fits: natural widths
    assert fitted([12, 30], [12, 10], 30) == [12, 18]
    assert fitted([20, 20], [15, 15], 20) == [10, 10]  # below the longest words: folded


def test_a_grid_and_a_table_without_color() -> None:
    page = Page(width=40, color=False)
    page.grid([("Agent", [("weather", "")]), ("Instructions", [("instructions.md (system)", "")])])
    page.blank()
    page.table("Tools", ["name", "description"], [[[("get_weather", "")], [("Get the current weather", "")]]])
    assert page.text().splitlines() == [
        "Agent         weather",
        "Instructions  instructions.md (system)",
        "",
        "Tools",
        " name        ┃ description",
        "━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━",
        " get_weather │ Get the current weather",
    ]


def test_a_narrow_table_wraps_its_cells_side_by_side() -> None:
    page = Page(width=26, color=False)
    page.table("T", ["name", "description"], [[[("send_alert", "")], [("Send a weather alert", "")]]])
    assert page.text().splitlines()[3:] == [" send_alert │ Send a", "            │ weather", "            │ alert"]


def test_styles_become_ansi_codes_only_in_color() -> None:
    spans = (("error", "red"), (" agent/tools/x.py", ""), (" [code]", "dim bold"))
    colored, plain = Page(80, color=True), Page(80, color=False)
    colored.line(*spans)
    plain.line(*spans, indent=2)
    assert colored.text() == "\x1b[31merror\x1b[0m agent/tools/x.py\x1b[2;1m [code]\x1b[0m\n"
    assert plain.text() == "  error agent/tools/x.py [code]\n"


def test_color_as_rich_decides_it(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for name in ("FORCE_COLOR", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    assert uses_color(Terminal()) and not uses_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "")
    assert not uses_color(Terminal())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert uses_color(io.StringIO())
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not uses_color(Terminal())
