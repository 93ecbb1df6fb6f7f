"""HTML pages as Markdown or plain text, for `web_fetch` (the standard library's parser, no dependency).

Scripts, styles and other invisible parts are dropped; headings, paragraphs, list items, line
breaks and table rows start new lines; in Markdown, headings get `#`, list items `- `, links
`[text](href)`, emphasis and code their marks, and `<pre>` blocks a fence. It aims at what a
model needs to read a page, not at a faithful rendering.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Literal

__all__ = ["html_to_text"]

_HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "svg", "iframe", "object"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "table", "tr", "ul", "ol",
     "dl", "dt", "dd", "blockquote", "figure", "figcaption", "form", "hr", "body", "html"}
)  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_MARKS = {"strong": "**", "b": "**", "em": "_", "i": "_", "code": "`"}


class _Converter(HTMLParser):
    def __init__(self, markdown: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.out: list[str] = []
        self.hidden = 0
        self.pre = 0
        self.links: list[str | None] = []
        self.title: list[str] = []
        self.in_title = False

    def _newline(self, count: int = 1) -> None:
        self.out.append("\n" * count)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _HIDDEN:
            self.hidden += 1
            return
        if self.hidden:
            return
        md = self.markdown
        if tag in _HEADINGS:
            self._newline(2)
            if md:
                self.out.append("#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self._newline()
            self.out.append("- " if md else "* ")
        elif tag == "br":
            self._newline()
        elif tag in ("td", "th"):
            self.out.append(" | " if md else "\t")
        elif tag == "pre":
            self.pre += 1
            self._newline(2)
            if md:
                self.out.append("```\n")
        elif tag in _BLOCKS:
            self._newline(2 if tag in ("p", "blockquote", "table", "ul", "ol") else 1)
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(href if md and href and not href.startswith(("javascript:", "#")) else None)
            if self.links[-1] is not None:
                self.out.append("[")
        elif md and tag in _MARKS and not self.pre:
            self.out.append(_MARKS[tag])

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
            return
        if self.hidden:
            return
        if tag == "a" and self.links:
            href = self.links.pop()
            if href is not None:
                self.out.append(f"]({href})")
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            if self.markdown:
                self.out.append("\n```")
            self._newline(2)
        elif tag in _HEADINGS or tag in _BLOCKS:
            self._newline(2 if tag in _HEADINGS or tag == "p" else 1)
        elif self.markdown and tag in _MARKS and not self.pre:
            self.out.append(_MARKS[tag])

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.hidden:
            return
        self.out.append(data if self.pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str, format: Literal["markdown", "text"] = "markdown") -> str:
    """The readable content of an HTML page, in Markdown or as plain text."""
    converter = _Converter(markdown=format == "markdown")
    converter.feed(html)
    converter.close()
    text = "".join(converter.out)
    lines = [re.sub(r"^ (?=\S)", "", line.rstrip()) for line in text.split("\n")]  # the space a collapsed break left
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(converter.title).split())
    if title and title not in body.split("\n", 1)[0]:
        body = (f"# {title}\n\n" if converter.markdown else f"{title}\n\n") + body
    return body + "\n" if body else ""
