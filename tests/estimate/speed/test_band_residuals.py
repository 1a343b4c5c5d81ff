"""The speed bands come from leave-one-GPU-out residuals of the calibration rows (issue 30):
no residual is computed by a fit that saw the row's GPU, a row whose constants cannot be
refitted without its GPU has none (an in-sample error would narrow the bands), and such rows
still count as calibration evidence."""

from __future__ import annotations

import pytest

from calibrate_script import calibrate as _calibrate
from refit_cache import shared_row_estimates
from whichgpu.estimate.validation import default_path, read_rows, split_of
from whichgpu.estimate.validation.cv import gpu_key


@pytest.fixture(scope="module")
def training(request):
    """The training rows, fitted as make calibrate fits them, their held-out residuals, and
    the calibration row ids each refit was given, keyed by the GPU it left out (the row
    estimates shared with the other speed refits: tests/refit_cache.py)."""
    cal = _calibrate()
    rows = [r for r in read_rows(default_path("speed")) if r["category"] == "training"]
    start = cal._snapshot()
    seen: list[set[str]] = []
    fit = cal.fit_groups

    def recording(*args, **kwargs):
        if kwargs.get("calib_ids") is not None:
            seen.append(set(kwargs["calib_ids"]))
        return fit(*args, **kwargs)

    try:
        with shared_row_estimates(request.config), cal.memo_scope():
            chosen, _ = cal.fit_groups(rows, report=lambda *a: None)
            fitted = cal.fitted_groups(chosen)
            cal.fit_groups = recording
            residuals, without = cal.held_out_residuals(rows, cal._snapshot(), fitted, "gpu")
            tables = cal.derived_tables(rows, residuals, without)
    finally:
        cal.fit_groups = fit
        cal._restore(start)
    return {"cal": cal, "rows": rows, "fitted": fitted, "residuals": residuals,
            "without": without, "refits": seen, "tables": tables}


def test_each_refit_leaves_out_every_calibration_row_of_one_gpu(training):
    calib = [r for r in training["rows"] if split_of(r["id"]) == "calibration"]
    assert training["refits"], "the training groups should be refitted without each GPU"
    for train in training["refits"]:
        missing = {gpu_key(r) for r in calib if r["id"] not in train}
        assert len(missing) == 1, missing  # one GPU, and all of its rows
        assert all(gpu_key(r) in missing for r in calib if r["id"] not in train)
    assert training["residuals"] and set(training["residuals"]) <= {r["id"] for r in calib}


def test_a_row_whose_constants_need_its_gpu_has_no_residual(training):
    """The CDNA 3 factor is fitted on MI300X rows only: without them it cannot be refitted,
    so the MI300X rows get no residual, instead of the in-sample error of the full fit."""
    cal = training["cal"]
    assert "training on AMD CDNA 3" in training["fitted"]
    mi300x = [r["id"] for r in training["rows"] if split_of(r["id"]) == "calibration"
              and r["gpu"].strip() == "mi300x" and cal._modelled(r)]
    assert mi300x
    assert set(mi300x) <= training["without"]
    assert not set(mi300x) & set(training["residuals"])


def test_rows_without_a_residual_still_count_as_evidence(training):
    tables = training["tables"]
    assert tables["measured_gpus"].get("mi300x", 0) >= 1
    n_evidence = sum(tables["calibration_evidence"]["training"].values())
    assert n_evidence == len(training["residuals"]) + len(training["without"])
    # the bands rest on the residuals only
    assert tables["band_evidence"]["training"] == len(training["residuals"])


def test_write_and_check_refuse_another_held_out_rule(capsys):
    cal = _calibrate()
    with pytest.raises(SystemExit) as exc:
        cal.main(["--check", "--held-out", "fold"])
    assert exc.value.code == 2
    assert "--held-out gpu" in capsys.readouterr().err


def test_a_category_without_an_interval_says_its_range_is_a_prior():
    """Video has too few held-out residuals for a band of its own (make calibrate): its
    answer must not claim an 80 % interval it does not have."""
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.catalog.gpus import get_gpu
    from whichgpu.estimate.constants import overridden, speed_value
    from whichgpu.estimate.speed import estimate_speed

    def note(bands):
        with overridden("speed_constants", "band_ratios", bands):
            est = estimate_speed(build_workload("hunyuanvideo", task="video"),
                                 get_gpu("h100-sxm"), check_fit=False)
        return next(a for a in est.assumptions if a.startswith("confidence"))

    without = {k: v for k, v in speed_value("band_ratios").items() if k.split("/")[0] != "video"}
    assert "a wide prior" in note(without) and "80 % interval of video" not in note(without)
    assert "the 80 % interval of video" in note(dict(without, video=[0.5, 1.8]))
