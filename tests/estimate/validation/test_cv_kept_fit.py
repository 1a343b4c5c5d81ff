"""Leave-one-out errors are out-of-sample only where the constants could be refitted without
the left-out GPU (issue 30): a row whose constant no other rows can fit keeps the value fitted
on it, so it is counted apart (``kept_fit``), never in the median error."""

from __future__ import annotations

from whichgpu.estimate.validation import Outcome, default_path, read_rows
from whichgpu.estimate.validation import cv as validation_cv


def test_rows_whose_constant_only_their_gpu_fits_are_kept_apart():
    rows = read_rows(default_path("speed"))
    (left,) = validation_cv.leave_one_out(rows, "gpu", {"mi300x"})
    # the CDNA 3 training factor is fitted on MI300X training rows alone
    training = {r["id"] for r in rows if r["gpu"].strip() == "mi300x"
                and r["category"] == "training"}
    modelled = {o.id for o in left.outcomes if o.predicted}
    assert training & modelled
    assert training & modelled <= set(left.kept_fit)
    kept = sum(1 for o in left.outcomes if o.id in training and o.error is not None)
    summary = {x.category: x for x in validation_cv.summarize([left])}
    assert "training" not in summary or summary["training"].kept_fit == kept


def test_summarize_leaves_kept_rows_out_of_the_error():
    outs = (Outcome("a", "decode", "calibration", 100.0, 110.0, "tokens/s"),
            Outcome("b", "decode", "calibration", 100.0, 300.0, "tokens/s"))
    left = validation_cv.LeftOut("gpu-x", outs, ("some group",), kept_fit=("b",))
    (s,) = validation_cv.summarize([left])
    assert s.n == 1 and s.kept_fit == 1
    assert abs(s.median_abs_error - 0.10) < 1e-9
    assert s.to_json()["kept_fit"] == 1
