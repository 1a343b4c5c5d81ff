"""Issue 29's training targets, on the held-out rows of the shipped and incoming validation
files pooled (the split is fixed by each row's id): training memory <= 10 % median absolute
error, full fine-tuning and pre-training each <= 15 %, training throughput <= 12 %; and the
issue's throughput phenomenon: estimates systematically low (0.77 of the measured rate).

A deliberate change that moves a median past its target fails here and must say so."""

from __future__ import annotations

import statistics

import pytest

from paths import ROOT
from whichgpu.estimate.validation import evaluate, read_rows, split_of
from whichgpu.estimate.validation import memory as vm
from whichgpu.estimate.validation import speed as vs
from whichgpu.estimate.validation.rows import measured_bytes

TRAINING = ("lora", "qlora", "full-ft", "pretrain")


def _held_out(kind: str, categories: tuple[str, ...]) -> list[float]:
    files = (f"validation/{kind}.csv", f"validation/incoming/{kind}-2026.csv")
    rows = [r for f in files for r in read_rows(ROOT / f)
            if r.get("category") in categories and split_of(r["id"]) == "holdout"]
    outs = (evaluate(rows, vm.predict_ranged, measured_bytes) if kind == "memory"
            else evaluate(rows, vs.predict, vs.measured))
    return [o.predicted / o.measured - 1 for o in outs if o.predicted]


@pytest.mark.parametrize(("categories", "target"), [
    (TRAINING, 0.10), (("full-ft",), 0.15), (("pretrain",), 0.15),
], ids=["training", "full-ft", "pretrain"])
def test_training_memory_held_out_meets_the_issues_target(categories, target):
    errors = _held_out("memory", categories)
    assert len(errors) >= 4
    assert statistics.median(abs(e) for e in errors) <= target


def test_training_throughput_held_out_meets_the_target_and_is_not_systematically_low():
    errors = _held_out("speed", ("training",))
    assert len(errors) >= 10
    assert statistics.median(abs(e) for e in errors) <= 0.12
    assert abs(statistics.median(errors)) < 0.10  # the issue found 0.77 of measured: -23 %
