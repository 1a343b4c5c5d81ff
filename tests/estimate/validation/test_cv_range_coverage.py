"""Leave-one-out validation counts how many left-out rows measured inside the stated range
around their left-out estimate (issue 30: coverage checked out of sample), leaving out the
rows whose constants could not be refitted without them, as the error does."""

from __future__ import annotations

from whichgpu.estimate.validation import Outcome
from whichgpu.estimate.validation import cv as validation_cv


def test_coverage_counts_the_left_out_rows_inside_their_range():
    outs = (Outcome("in", "decode", "calibration", 100.0, 110.0, "tokens/s", low=90.0,
                    high=120.0),
            Outcome("out", "decode", "holdout", 100.0, 150.0, "tokens/s", low=130.0,
                    high=170.0),
            Outcome("bare", "decode", "calibration", 100.0, 105.0, "tokens/s"),
            Outcome("kept", "decode", "calibration", 100.0, 100.0, "tokens/s", low=90.0,
                    high=110.0))
    left = validation_cv.LeftOut("gpu-x", outs, ("some group",), kept_fit=("kept",))
    (s,) = validation_cv.summarize([left])
    assert (s.n, s.n_ranged, s.inside) == (3, 2, 1)
    assert s.coverage == 0.5
    assert s.to_json()["coverage"] == 0.5


def test_no_stated_range_means_no_coverage():
    outs = (Outcome("bare", "prefill", "calibration", 100.0, 105.0, "tokens/s"),)
    (s,) = validation_cv.summarize([validation_cv.LeftOut("gpu-y", outs, ())])
    assert s.n_ranged == 0 and s.coverage is None
