"""One quantile rule for the validation tables, the speed bands and the serving bands
(whichgpu.estimate.validation.quantile), agreeing with the standard library's."""

from __future__ import annotations

import statistics

import pytest

from calibrate_script import calibrate
from whichgpu.estimate import serving_fit
from whichgpu.estimate.validation import _p90, quantile


@pytest.mark.parametrize("values", [[3.0], [1.0, 2.0], [0.5, -1.0, 4.0, 2.0, 9.0, 7.5, 3.25]])
def test_linear_interpolation_between_ranks_as_the_standard_library(values):
    # statistics.quantiles(method="inclusive") interpolates the same way (n >= 2)
    if len(values) >= 2:
        deciles = statistics.quantiles(values, n=10, method="inclusive")
        assert quantile(values, 0.1) == pytest.approx(deciles[0])
        assert quantile(values, 0.9) == pytest.approx(deciles[-1])
        assert _p90(values) == pytest.approx(deciles[-1])
    assert quantile(values, 0.0) == min(values) and quantile(values, 1.0) == max(values)
    assert quantile(values, 0.5) == pytest.approx(statistics.median(values))


def test_the_calibration_scripts_use_it():
    module = calibrate()
    assert module._quantile is quantile
    assert serving_fit._quantile is quantile
