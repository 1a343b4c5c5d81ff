"""Visible page text a French reader sees, and the English words that must not be in it."""

from __future__ import annotations

import re
from html.parser import HTMLParser


class _Text(HTMLParser):
    """Visible text outside elements marked lang="en" (and outside code)."""

    VOID = frozenset({"br", "input", "meta", "link", "img", "option", "hr", "circle", "line",
                      "rect", "path", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        english = dict(attrs).get("lang") == "en" or tag in ("pre", "code", "script", "style")
        self.stack.append((tag, english))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if data.strip() and not any(e for _, e in self.stack):
            self.text.append(data.strip())


ENGLISH = re.compile(r"\b(the|and|with|which|would|does not|from|is|are)\b")
