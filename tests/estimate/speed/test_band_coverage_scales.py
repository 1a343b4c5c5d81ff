"""The speed bands' width is checked on the calibration residuals they did not see (issue 30):
a category whose bands hold a share outside 75-85 % of its leave-one-out residuals has every
band of the category scaled in log width until they do (scripts/calibrate.py
coverage_scales); a category already inside is left as the interval rule made it."""

from __future__ import annotations

import pytest

from calibrate_script import calibrate

KEY = "x/engine/HBM/16bit"


@pytest.fixture(scope="module")
def cal():
    return calibrate()


def _pairs(values, key=KEY):
    return [(key, v) for v in values]


# evenly spread log ratios: the empirical 10th-90th percentiles of 19 of them leave the
# 20th outside more often than one time in five (70 % inside)
UNDER = _pairs([0.1 * i for i in range(-10, 10)])
# a few tight rows and one far off: the t interval is as wide as the far row makes it,
# so the tight rows are always inside (89 %) and narrowing does not change that
OVER = _pairs([-0.03, -0.02, -0.01, 0.0, 0.01, 0.02, 0.03, 0.015, 0.9], "y/engine/HBM/16bit")


def test_a_category_holding_too_few_of_its_left_out_rows_is_widened_until_it_holds_enough(cal):
    before = cal.loo_coverage(UNDER)["x"][1]
    assert before < cal.COVERAGE_LOW
    scales = cal.coverage_scales(UNDER)
    assert scales["x"] > 1.0
    _, share, width = cal.loo_coverage(UNDER, scales)["x"]
    assert cal.COVERAGE_LOW <= share <= cal.COVERAGE_HIGH
    assert width > cal.loo_coverage(UNDER)["x"][2]
    # the smallest widening that does it: one step less is still short
    step = round(scales["x"] - 0.05, 2)
    assert cal.loo_coverage(UNDER, {"x": step})["x"][1] < cal.COVERAGE_LOW


def test_a_category_already_inside_keeps_its_bands(cal):
    # measured at or above the estimate, evenly spread: 14 of 17 inside (82 %)
    inside = _pairs([0.1 * i for i in range(17)])
    share = cal.loo_coverage(inside)["x"][1]
    assert cal.COVERAGE_LOW <= share <= cal.COVERAGE_HIGH
    assert cal.coverage_scales(inside) == {"x": 1.0}
    assert cal.pooled_bands(inside, {"x": 1.0}) == cal.pooled_bands(inside)


def test_no_factor_reaching_the_target_leaves_the_band_as_the_rule_made_it(cal):
    assert cal.loo_coverage(OVER)["y"][1] > cal.COVERAGE_HIGH
    assert cal.coverage_scales(OVER) == {"y": 1.0}


def test_a_scale_applies_to_every_group_of_its_category_and_no_other(cal):
    pairs = UNDER + _pairs([0.1 * i for i in range(-10, 10)], "x/engine/GDDR/4bit") + OVER
    scales = cal.coverage_scales(pairs)
    plain, _ = cal.pooled_bands(pairs)
    scaled, _ = cal.pooled_bands(pairs, scales)
    assert scales["x"] > 1.0 and scales["y"] == 1.0
    assert scaled["y"] == plain["y"]
    lo, hi = scaled["x"]
    assert lo < plain["x"][0] and hi > plain["x"][1]
    assert scaled["x"][0] <= 1.0 <= scaled["x"][1]  # a band always holds the typical value
