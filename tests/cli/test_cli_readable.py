"""Output people read (issue 31): model names printed as they are ("FLUX.1 [dev]" kept its
brackets only in some tables: rich read "[dev]" as markup), no column that is empty in every
row, and no word broken across lines where the width allows it."""

from __future__ import annotations

import re

import pytest
from rich.console import Console
from rich.table import Table

from whichgpu.cli.common import tidy


@pytest.mark.parametrize("args", [
    ("memory", "flux.1-dev", "--task", "image"),
    ("speed", "flux.1-dev", "--task", "image", "--gpu", "h100-sxm"),
    ("recommend", "flux.1-dev", "--task", "image", "--images", "100", "--prices",
     "article-000", "--top", "2"),
    ("model", "flux.1-dev"),
])
def test_a_model_name_with_brackets_is_printed_as_it_is(cli, args):
    r = cli(*args)
    assert r.code == 0, r.err
    assert "FLUX.1 [dev]" in r.out


def test_a_column_empty_in_every_row_is_dropped():
    t = Table("GPU", "Region", "Price")
    t.add_row("h100-sxm", "", "$3.15")
    t.add_row("a100-80gb-sxm", "", "$0.72")
    assert [c.header for c in tidy(t).columns] == ["GPU", "Price"]


def test_a_column_with_one_value_stays():
    t = Table("GPU", "Region")
    t.add_row("h100-sxm", "")
    t.add_row("l4", "eu-south-2")
    assert [c.header for c in tidy(t).columns] == ["GPU", "Region"]


def _render(table: Table, width: int) -> str:
    import io

    console = Console(width=width, record=True, file=io.StringIO())
    console.print(tidy(table, console))
    return console.export_text()


def test_words_are_not_broken_when_the_width_allows():
    t = Table("Name", "Provider", "Notes")
    t.add_row("rtx-4060-ti-16gb", "Prime Intellect", "a long note that wraps on its words " * 3)
    out = _render(t, 60)
    for word in ("rtx-4060-ti-16gb", "Provider", "Intellect", "wraps"):
        assert word in out, out


def test_prices_list_at_80_columns_breaks_no_word(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    r = cli("prices", "list", "--limit", "25")
    assert r.code == 0, r.err
    assert max(len(line) for line in r.out.splitlines()) <= 80
    header = next(line for line in r.out.splitlines() if "GPU" in line and "Feed" in line)
    assert {"GPU", "Provider", "Age", "Feed"} <= set(header.split())
    rows = [line for line in r.out.splitlines()[4:] if line.strip() and "more;" not in line]
    providers = {w for line in rows for w in re.split(r"\s{2,}", line.strip())}
    assert "Provid" not in providers and "er" not in providers


def test_the_columns_after_a_dropped_one_keep_their_width():
    """rich lays a column out by its index: after an empty one goes, the next ones must
    not be cut ("undated" printed as "undate")."""
    t = Table("GPU", "Region", "Age", "Feed")
    t.columns[2].no_wrap = True
    t.add_row("h100-sxm", "", "25 d", "vramfarm-2026-11")
    t.add_row("h100-sxm", "", "undated", "article-000")
    out = _render(t, 100)
    assert "undated" in out and "vramfarm-2026-11" in out and "Region" not in out


def test_a_ranking_is_named_once_in_the_title(cli):
    r = cli("recommend", "llama-3.1-8b", "--prices", "article-000", "--top", "1")
    assert r.code == 0, r.err
    assert r.out.count("(ranked by") == 1, r.out[:300]


def test_money_follows_one_rule_in_the_tco_tables(cli):
    """Cents below $1,000, whole dollars from $1,000 (issue 31 saw "$156.00" beside "$156":
    the ownership table forced whole dollars on some rows)."""
    r = cli("tco", "h100-sxm", "--purchase-price", "25000USD", "--rent-price", "3.15USD",
            "--maintenance-per-year", "250USD")
    assert r.code == 0, r.err
    amounts = re.findall(r"\$([\d,]+(?:\.\d+)?)", r.out)
    assert len(amounts) > 10
    for text in amounts:
        value = float(text.replace(",", ""))
        assert ("." in text) == (value < 1000), text
