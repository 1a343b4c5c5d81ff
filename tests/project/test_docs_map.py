"""The documentation is a map (issue 35, item 4): docs/index.md lists every page under docs/,
and every relative link of the README, CHANGELOG.md, ARCHITECTURE.md and the docs pages leads
to a file that exists. (ARCHITECTURE.md's own paths: tests/project/test_architecture_paths.py; the
validation tables in docs/validation.md: tests/estimate/validation/test_validation_tables.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paths import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "ARCHITECTURE.md",
         *sorted(DOCS.glob("*.md"))]
# [text](target) where target is not a URL or an anchor in the same page
_LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text("utf-8"), flags=re.S)
    return [m.group(1).split("#")[0] for m in _LINK.finditer(text)]


def test_the_index_lists_every_docs_page():
    linked = {(DOCS / target).resolve() for target in _links(DOCS / "index.md")}
    pages = {p.resolve() for p in DOCS.glob("*.md")} - {(DOCS / "index.md").resolve()}
    assert pages, "no docs pages found"
    assert not sorted(p.name for p in pages - linked), "pages docs/index.md does not list"
    assert (ROOT / "CHANGELOG.md").resolve() in linked


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_leads_to_a_file(page):
    broken = [t for t in _links(page) if t and not (page.parent / t).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_the_link_reader_finds_links():
    assert "docs/validation.md" in _links(ROOT / "README.md")
    assert len(_links(DOCS / "index.md")) >= 10
