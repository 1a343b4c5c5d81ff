"""Issue 31: ``prices list`` on a narrow terminal breaks no feed name mid-word. Below 120
columns the source every feed shares ('skypilot/') is said once under the table and each row
shows its feed's own name whole; --json keeps every feed in full."""

from __future__ import annotations

import re

import pytest


def _width(monkeypatch, columns: str) -> None:
    """The terminal's width, on the CLI's console itself (rich fixes it from COLUMNS when the
    console is made, at the CLI's first use in this process)."""
    from whichgpu.cli.common import console

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(console, "_width", int(columns))


@pytest.mark.parametrize("columns", ["70", "80", "99", "100", "130"])
def test_every_feed_name_shows_whole_at_any_width(cli, monkeypatch, columns):
    _width(monkeypatch, columns)
    text = cli("prices", "list", "h100", "--limit", "40").out
    offers = cli("prices", "list", "h100", "--limit", "40", "--json").json()["offers"]
    feeds = {o["offer_set"] for o in offers}
    assert feeds and all("/" in f for f in feeds)  # the market snapshot: skypilot/<provider>
    for feed in feeds:
        own = feed.split("/", 1)[1]
        shown = feed if int(columns) >= 120 else own
        assert re.search(rf"(?<![\w/]){re.escape(shown)}(?![\w/])", text), (feed, text)
    if int(columns) < 120:
        assert "Feed: skypilot/<feed>" in text
        assert "skypilot/" not in text.split("Feed:")[0]
    assert max(len(line) for line in text.splitlines()) <= int(columns)


def test_feeds_of_different_sources_keep_their_whole_names(cli, monkeypatch):
    _width(monkeypatch, "80")
    text = cli("prices", "list", "--prices", "article-000", "--limit", "5").out
    assert "article-000" in text and "Feed:" not in text
