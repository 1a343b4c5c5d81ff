"""TTFT bands with a fixed part (issue 30): published setups differ by tens of ms in the
fixed first-token cost, so a TTFT's band is an interval of (measured + A) / (estimated + A)
with A chosen on the calibration rows (serving_fit.band_offsets); long TTFTs are no longer
given the spread of short ones."""

from __future__ import annotations

import math

import pytest

from whichgpu.estimate import serving_fit
from whichgpu.estimate.speed.serving_bands import (
    MIN_LOW_SHARE,
    band_offset_ms,
    offset_bounds,
    serving_band,
    serving_range,
)


def test_no_offset_is_the_plain_ratio_band():
    assert offset_bounds(200.0, 0.6, 1.5, 0.0) == (pytest.approx(120.0), pytest.approx(300.0))


def test_a_fixed_part_widens_short_times_and_hardly_long_ones():
    lo, hi = 0.7, 1.4
    short = offset_bounds(40.0, lo, hi, 30.0)
    long = offset_bounds(4000.0, lo, hi, 30.0)
    assert short[0] < 40.0 < short[1] and long[0] < 4000.0 < long[1]
    assert short[1] / short[0] > long[1] / long[0]
    assert long[1] / long[0] == pytest.approx(hi / lo, rel=0.02)
    # the measured time plus the fixed part is within the band of the estimate plus it
    assert (short[1] + 30.0) / (40.0 + 30.0) == pytest.approx(hi)


def test_the_low_end_never_goes_below_its_floor():
    low, high = offset_bounds(10.0, 0.6, 1.4, 50.0)  # (10 + 50) x 0.6 - 50 < 0
    assert low == pytest.approx(MIN_LOW_SHARE * 10.0) and high > 10.0


def test_the_shipped_ttft_range_applies_the_shipped_offset():
    lo, hi = serving_band("ttft", "dense")
    offset_s = band_offset_ms("ttft", "dense") / 1e3
    for typical in (0.03, 0.3, 3.0):
        r = serving_range(typical, "ttft", "dense")
        assert (r.low, r.high) == pytest.approx(offset_bounds(typical, lo, hi, offset_s))
    # and it is read in ms where the value is in ms (the validation's rows)
    r_ms = serving_range(300.0, "ttft", "dense", in_ms=True)
    assert (r_ms.low, r_ms.high) == pytest.approx(
        tuple(1e3 * x for x in (serving_range(0.3, "ttft", "dense").low,
                                serving_range(0.3, "ttft", "dense").high)))
    # throughput has no fixed part
    assert band_offset_ms("throughput", "dense") == 0.0


def _rows_and_residuals():
    """Dense-model TTFT rows (ms): short ones off by a fixed -15..+30 ms (setups' first-token
    cost), long ones off by a proportional -6..+8 %."""
    short = [(20, -15), (25, -10), (30, -5), (35, 0), (40, 5), (45, 10), (50, 15), (22, 30),
             (28, -12), (33, 8), (38, -3), (43, 12), (48, -8), (26, 25)]
    long = [(1000, -0.06), (1500, -0.04), (2000, -0.02), (2500, 0.0), (3000, 0.02),
            (3500, 0.04), (4000, 0.06), (1200, -0.05), (1700, 0.03), (2200, -0.01),
            (2700, 0.05), (3200, -0.03), (3700, 0.01), (4200, 0.08)]
    cases = [(e, e + d) for e, d in short] + [(e, e * (1 + p)) for e, p in long]
    rows, residuals = [], {}
    for i, (est, measured) in enumerate(cases):
        rid = f"row-{i}"
        rows.append({"id": rid, "metric": "ttft_ms_mean", "value": str(measured),
                     "model": "meta-llama/Llama-3.1-8B-Instruct"})
        residuals[rid] = math.log(measured / est)
    return rows, residuals


def test_the_offset_is_chosen_on_the_rows_and_narrows_the_ranges_they_need():
    rows, residuals = _rows_and_residuals()
    (offset,) = serving_fit.band_offsets(rows, residuals).values()
    assert offset > 0
    share, width = serving_fit.offset_check(rows, residuals, "ttft", offset)
    _, width0 = serving_fit.offset_check(rows, residuals, "ttft", 0.0)
    assert serving_fit.COVERAGE[0] <= share <= serving_fit.COVERAGE[1]
    assert width < width0
    # the narrowest of the offsets whose leave-one-out coverage is on target
    for a in serving_fit.OFFSET_GRID_MS:
        k, w = serving_fit.offset_check(rows, residuals, "ttft", a)
        if serving_fit.COVERAGE[0] <= k <= serving_fit.COVERAGE[1]:
            assert w >= width


def test_a_short_ttft_says_its_range_is_wide_because_of_the_fixed_part():
    from whichgpu.estimate.speed.serving_bands import WIDEST_WITHOUT_REASON, wide_range_reason

    if band_offset_ms("ttft", "dense") == 0:
        pytest.skip("the shipped TTFT band has no fixed part")
    short = serving_range(0.02, "ttft", "dense")
    assert short.high / short.low > WIDEST_WITHOUT_REASON
    said = wide_range_reason("ttft", "dense", short)
    assert said is not None and "first-token cost" in said
    assert wide_range_reason("ttft", "dense", serving_range(3.0, "ttft", "dense")) is None


def _spread_rows(n: int, step: float):
    rows, residuals = [], {}
    for i in range(n):
        rid = f"tput-{i}"
        rows.append({"id": rid, "metric": "output_tokens_per_s", "value": "1000",
                     "model": "meta-llama/Llama-3.1-8B-Instruct"})
        residuals[rid] = step * (i - n // 2)
    return rows, residuals


def test_serving_bands_holding_too_few_left_out_rows_are_widened_as_the_speed_bands_are():
    rows, residuals = _spread_rows(20, 0.1)  # evenly spread: 70 % inside when left out
    share = serving_fit.loo_share(rows, residuals, "throughput")
    assert share is not None and share < serving_fit.COVERAGE[0]
    scales = serving_fit.coverage_scales(rows, residuals)
    assert scales["throughput"] > 1.0
    after = serving_fit.loo_share(rows, residuals, "throughput", scales=scales)
    assert after is not None and serving_fit.COVERAGE[0] <= after <= serving_fit.COVERAGE[1]
    wide = serving_fit.bands(rows, residuals, scales=scales)["throughput"]
    plain = serving_fit.bands(rows, residuals)["throughput"]
    assert wide[0] < plain[0] and wide[1] > plain[1]


def test_serving_bands_already_on_target_are_left_alone():
    rows, residuals = _spread_rows(17, 0.1)
    rows_pos = {k: v + 0.8 for k, v in residuals.items()}  # at or above the estimate: 82 %
    share = serving_fit.loo_share(rows, rows_pos, "throughput")
    assert share is not None and serving_fit.COVERAGE[0] <= share <= serving_fit.COVERAGE[1]
    assert serving_fit.coverage_scales(rows, rows_pos) == {"throughput": 1.0}
