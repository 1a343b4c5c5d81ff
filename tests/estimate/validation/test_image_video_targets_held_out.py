"""Issue 29's accuracy targets for images and video, on the held-out rows of the shipped and
incoming validation files pooled (the split is fixed by each row's id): image speed <= 12 %,
video time <= 15 %, image and video memory <= 10 % median absolute error; and the two video
phenomena the issue measured: a Wan 2.2 A14B run on an H200 about 30 % high, and video ranges
6x wide (HunyuanVideo's 40x).

A deliberate change that moves a median past its target fails here and must say so."""

from __future__ import annotations

import statistics

import pytest

from paths import ROOT
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.validation import evaluate, read_rows, split_of
from whichgpu.estimate.validation import memory as vm
from whichgpu.estimate.validation import speed as vs
from whichgpu.estimate.validation.rows import measured_bytes

SPEED = ("validation/speed.csv", "validation/incoming/speed-2026.csv")
MEMORY = ("validation/memory.csv", "validation/incoming/memory-2026.csv")


def _errors(files, category: str, memory: bool, split: str | None = "holdout",
            named: str = "") -> dict:
    rows = [r for f in files for r in read_rows(ROOT / f)
            if r.get("category") == category and named in r["id"]
            and (split is None or split_of(r["id"]) == split)]
    outs = (evaluate(rows, vm.predict_ranged, measured_bytes) if memory
            else evaluate(rows, vs.predict, vs.measured))
    return {o.id: o.predicted / o.measured - 1 for o in outs if o.predicted}


@pytest.mark.parametrize(("files", "category", "memory", "target"), [
    (SPEED, "diffusion", False, 0.12),
    (SPEED, "video", False, 0.15),
    (MEMORY, "image", True, 0.10),
    (MEMORY, "video", True, 0.10),
], ids=["image-speed", "video-time", "image-memory", "video-memory"])
def test_held_out_median_error_meets_the_issues_target(files, category, memory, target):
    errors = _errors(files, category, memory)
    assert len(errors) >= 5  # enough rows to judge
    assert statistics.median(abs(e) for e in errors.values()) <= target


def test_no_wan_22_a14b_run_on_an_h200_comes_out_30_percent_high():
    """The issue: 'Video time is about 30 % high on a Wan 2.2 A14B run on an H200'. The
    bf16 H200 rows of the official repository (LightX2V's benchmark doc) at 480p and 720p."""
    h200 = _errors(SPEED, "video", False, split=None, named="h200-official")
    assert len(h200) == 2
    assert max(h200.values()) < 0.30


@pytest.mark.parametrize("model", ["wan-2.2-14b", "hunyuanvideo"])
def test_video_ranges_are_narrower_than_the_issue_found(model):
    """The issue: video ranges spanning 6x, HunyuanVideo's 40x. The band is the video
    category's calibrated interval (make calibrate); a range as wide as 5x means it came back."""
    est = estimate_speed(build_workload(model, task="video"), get_gpu("h100-sxm"),
                         check_fit=False)
    r = est.times["seconds_per_video"]
    assert r.low < r.typical < r.high
    assert r.high / r.low < 5
