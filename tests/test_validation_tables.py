"""The README's accuracy tables are what the validation computes (issue 15: the README shows
today's figures; a figure that drifts from `make validate` fails here)."""

from pathlib import Path

from whichgpu.estimate import validation_tables as vt

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_accuracy_tables_match_the_validation():
    text = README.read_text(encoding="utf-8")
    tables = vt.render(quick=True)
    assert set(tables) <= set(vt.blocks(text)), "README lacks a BEGIN/END accuracy marker"
    assert vt.drift(text, tables) == [], (
        "README accuracy tables are stale: run `make readme-accuracy`")


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
