"""The memory model against validation/memory.csv: the README's targets hold on the holdout
split, every row is modelled unless it says why not, and the data set works from anywhere."""

import csv
import shutil

import pytest

from paths import ROOT
from whichgpu.errors import InputError
from whichgpu.estimate import validation
from whichgpu.estimate.validation import memory as validation_memory
from whichgpu.estimate.validation import summarize

CSV = ROOT / "validation" / "memory.csv"
# The README's targets (issue 5): median absolute error on the holdout split.
TARGETS = {"weights": 0.02, "inference": 0.07, "training": 0.12}


@pytest.fixture(scope="module")
def outcomes():
    return validation_memory.run(CSV)


def test_readme_targets_hold_on_the_holdout_split(outcomes):
    holdout = [o for o in outcomes if o.split == "holdout"]
    medians = {s.category: s for s in summarize(holdout) if s.split == "holdout"}
    for category, target in TARGETS.items():
        s = medians[category]
        assert s.n >= 4, category
        assert s.median_abs_error <= target, (category, s.median_abs_error, target)


def test_every_row_is_modelled_unless_it_says_why_not(outcomes):
    with CSV.open(newline="", encoding="utf-8") as fh:
        unmodelled = {r["id"] for r in csv.DictReader(fh) if "unmodelled=" in r["settings"]}
    for o in outcomes:
        if o.id in unmodelled:
            assert o.predicted is None
        else:
            assert o.predicted is not None and o.predicted > 0, (o.id, o.note)


def test_at_least_60_rows_with_a_source_each(outcomes):
    assert len(outcomes) >= 60
    assert all(o.source_url.startswith(("http", "local:")) for o in outcomes)


def test_a_row_that_sums_gpus_is_compared_with_the_sum(outcomes):
    row = next(o for o in outcomes if o.id == "mem-qwen25-72b-bf16-hf-in1")
    assert "x 2 GPUs" in row.note and abs(row.error) < 0.05


def test_validate_runs_from_any_directory_with_file(cli, tmp_path, monkeypatch):
    copy = tmp_path / "rows.csv"
    shutil.copy(CSV, copy)
    monkeypatch.chdir(tmp_path)
    r = cli("validate", "memory", "--file", str(copy), "--split", "holdout", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["rows"] and all(x["split"] == "holdout" for x in d["rows"])


def test_without_a_checkout_the_error_says_to_pass_file(monkeypatch, tmp_path):
    monkeypatch.setattr(validation.resources, "files", lambda _pkg: tmp_path / "site" / "pkg")
    with pytest.raises(InputError, match="--file"):
        validation.default_path("memory")
