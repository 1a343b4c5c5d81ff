"""The accuracy tables of docs/validation.md are what the validation computes (issue 15: the
page shows today's figures; a figure that drifts from `make validate` fails here)."""


from paths import ROOT
from whichgpu.estimate.validation import tables as vt

PAGE = ROOT / vt.TARGET


def test_validation_page_accuracy_tables_match_the_validation():
    text = PAGE.read_text(encoding="utf-8")
    tables = vt.render(quick=True)
    assert set(tables) <= set(vt.blocks(text)), f"{vt.TARGET} lacks a BEGIN/END accuracy marker"
    assert vt.drift(text, tables) == [], (
        f"{vt.TARGET} accuracy tables are stale: run `make readme-accuracy`")


def test_the_readme_links_the_validation_page_and_holds_no_tables():
    """The tables moved out of the README (issue 31); it points to where they are."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert vt.blocks(readme) == {}
    assert "docs/validation.md" in readme


def test_replace_rewrites_only_the_named_block():
    text = ("a\n<!-- BEGIN accuracy:fits -->\nold\n<!-- END accuracy:fits -->\nb\n"
            "<!-- BEGIN accuracy:counts -->\nkeep\n<!-- END accuracy:counts -->\n")
    out = vt.replace(text, {"fits": "new\nlines"})
    assert vt.blocks(out) == {"fits": "new\nlines", "counts": "keep"}
    assert vt.drift(out, {"fits": "new\nlines"}) == []
    assert vt.drift(out, {"counts": "other"}) == ["counts"]


def test_verdict_names_a_missed_target():
    assert vt.verdict(0.119, 0.12) == "12 %: met"
    assert vt.verdict(0.402, 0.25) == "25 %: **missed**"
    assert vt.verdict(None, 0.2) == "20 %: no rows"
