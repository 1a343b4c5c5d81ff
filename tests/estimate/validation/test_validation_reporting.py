"""`whichgpu validate` reports the error per engine and architecture (with the rows' dates) and
by leave-one-GPU-out and leave-one-source-out cross-validation, beside the holdout split."""

from __future__ import annotations

import json

from refit_cache import cached, shared_row_estimates
from whichgpu.estimate.constants import all_constants
from whichgpu.estimate.validation import cv as validation_cv
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import speed as validation_speed


def test_sources_are_grouped_by_publisher_not_by_commit_or_anchor():
    key = validation_cv.source_key
    a = key({"source_url": "https://github.com/o/r/blob/abc/README.md#x"})
    b = key({"source_url": "https://github.com/o/r/blob/def/docs/perf.md"})
    assert a == b == "github:o/r"
    assert key({"source_url": "https://github.com/o/r/pull/12#issuecomment-3"}) == \
        "github:o/r/pull/12"
    assert key({"source_url": "https://example.com/post?a=1"}) == "example.com/post"


def test_leaving_a_gpu_out_refits_without_it_and_restores_the_constants(request):
    rows = read_rows(default_path("speed"))
    before = {k: v.value for k, v in all_constants("speed_constants").items()}
    in_sample = {o.id: o.predicted for o in validation_speed.run()}
    # the A100 carries calibration rows of several fitted groups (its refit's row estimates
    # shared with the other speed refits: tests/refit_cache.py)
    with shared_row_estimates(request.config):
        (left,) = validation_cv.leave_one_out(rows, "gpu", {"a100-80gb-sxm"})
    assert left.refitted, "an A100 calibration row should drive at least one fit"
    assert all(r["gpu"] == "a100-80gb-sxm" for r in rows if r["id"] in
               {o.id for o in left.outcomes})
    moved = [o for o in left.outcomes if o.predicted and in_sample.get(o.id)
             and abs(o.predicted / in_sample[o.id] - 1) > 1e-6]
    assert moved, "refitting without the A100 should move some of its predictions"
    after = {k: v.value for k, v in all_constants("speed_constants").items()}
    assert after == before


def test_validate_speed_prints_engine_architecture_and_leave_one_out_tables(cli, request):
    """(Its leave-one-out refits are kept for the same inputs, and share their row
    estimates with the other speed refits: tests/refit_cache.py.)"""
    def run() -> dict:
        with shared_row_estimates(request.config):
            res = cli("validate", "speed", "--json")
        return {"code": res.code, "out": res.out, "err": res.err}

    res = cached(request.config, "validate-speed-json", run, keep=lambda r: r["code"] == 0)
    assert res["code"] == 0, res["err"]
    data = json.loads(res["out"])
    groups = data["by_engine_arch"]
    assert any(g["key"][1].startswith("llamacpp (") for g in groups)  # the build era shown
    assert all({"first_date", "last_date", "n", "median_abs_error"} <= set(g) for g in groups)
    cv = data["cross_validation"]
    for by in ("gpu", "source"):
        cats = {s["category"] for s in cv[by]}
        assert {"decode", "prefill"} <= cats
        assert all(s["n"] >= s["groups"] >= 1 for s in cv[by])


def test_validate_memory_reports_fit_verdicts_on_the_measured_cards(cli):
    res = cli("validate", "memory", "--json")
    data = res.json()
    verdicts = data["verdicts"]
    assert sum(verdicts["counts"].values()) >= 10
    assert verdicts["counts"].get("does not fit", 0) == 0
