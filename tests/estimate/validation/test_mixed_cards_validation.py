"""validation/mixed_cards.csv: every row sourced and dated, every row estimated, and the
script that prints the errors runs (accuracy is read from its table, not asserted here)."""

from __future__ import annotations

import csv
import runpy

from paths import ROOT
from whichgpu.estimate.validation.mixed import DEFAULT_CSV, validate_mixed


def test_every_row_is_sourced_dated_and_names_catalog_cards():
    from whichgpu.catalog.gpu_list import parse_gpu_list

    with open(DEFAULT_CSV, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 5
    for row in rows:
        assert row["source_url"].startswith("https://"), row["id"]
        assert row["date"] and row["conditions"], row["id"]
        assert row["compare"] in ("value", "ratio"), row["id"]
        assert len(parse_gpu_list(row["gpus"])) >= 2, row["id"]
        if row["compare"] == "ratio":
            assert row["control_gpus"] and float(row["control_value"]) > 0, row["id"]


def test_every_row_gets_an_estimate_and_a_ratio_where_it_has_a_control():
    rows = validate_mixed()
    assert {r.id for r in rows} >= {"mix-sx-q38-5090-3080", "mix-c3090-5090-3090ti-tp2"}
    for r in rows:
        assert 0 < r.estimate.low <= r.estimate.typical <= r.estimate.high, r.id
        assert (r.control_ratio is None) == (r.estimated_ratio is None), r.id


def test_the_script_prints_the_error_table(capsys):
    main = runpy.run_path(str(ROOT / "scripts" / "validate_mixed_cards.py"))["main"]
    assert main() == 0
    out = capsys.readouterr().out
    assert "median |error|" in out and "mix-sx-q38-5090-3080" in out
