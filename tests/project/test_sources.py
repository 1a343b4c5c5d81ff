"""Every article fact the code, data and docs cite (S1...S30) ships in docs/sources/."""

from __future__ import annotations

import re
from pathlib import Path

from paths import ROOT

SOURCES = ROOT / "docs" / "sources"
CITED = re.compile(r"(?<![\w-])S([0-9]{1,2})(?![\w-])")
SCANNED = (".py", ".md", ".toml", ".csv", ".html", ".po")


def defined() -> set[int]:
    text = (SOURCES / "seed-facts.md").read_text("utf-8")
    return {int(n) for n in re.findall(r"^- S([0-9]+) ", text, flags=re.M)}


def citing_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    for folder in ("src", "docs", "validation", "tests"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in SCANNED
                  and SOURCES not in p.parents and p.name != "test_sources.py"]
    return [p for p in files if p.is_file()]


def test_the_articles_and_their_facts_ship_in_the_repository():
    assert len(list((SOURCES / "seeds").glob("*.txt"))) == 2
    assert defined() >= {*range(1, 16), *range(20, 31)}


def test_every_cited_fact_exists():
    known = defined()
    missing = {}
    for path in citing_files():
        for m in CITED.finditer(path.read_text("utf-8", errors="replace")):
            if int(m.group(1)) not in known:
                missing.setdefault(f"S{m.group(1)}", str(path.relative_to(ROOT)))
    assert not missing, f"cited but not in docs/sources/seed-facts.md: {missing}"


def test_the_code_cites_the_facts():
    """The check above is not vacuous: the code and data cite many of the facts."""
    cited = set()
    for path in citing_files():
        if "src" in path.parts:
            cited |= {int(n) for n in CITED.findall(path.read_text("utf-8", errors="replace"))}
    assert len(cited & defined()) >= 15
