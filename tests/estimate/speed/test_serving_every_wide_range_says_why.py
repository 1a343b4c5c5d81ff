"""Issue 30's "no range wider than 5x unless it says why", over every serving range an answer
can state: each metric and model family, and typical values from 1 ms to 100 s (a TTFT's width
depends on its length, through the band's fixed part), not only the bands' own widths."""

from __future__ import annotations

import itertools

import pytest

from whichgpu.estimate.speed.serving_bands import (
    WIDEST_WITHOUT_REASON,
    serving_range,
    wide_range_reason,
)

TYPICALS_S = [10 ** (k / 4) for k in range(-12, 9)]  # 1 ms .. 100 s


@pytest.mark.parametrize(("metric", "family"), list(itertools.product(
    ("throughput", "ttft", "tpot"), ("dense", "moe", "moe-mla", None))))
def test_a_range_says_why_exactly_when_it_is_over_5x(metric, family):
    for typical in TYPICALS_S:
        rng = serving_range(typical, metric, family)
        reason = wide_range_reason(metric, family, rng)
        wide = rng.high / rng.low > WIDEST_WITHOUT_REASON
        assert (reason is not None) == wide, (metric, family, typical)
        if reason is not None:
            assert f"{rng.high / rng.low:.1f}x wide" in reason


def test_some_short_ttft_is_over_5x_for_its_fixed_part_and_says_so():
    # the sweep above is not empty of the case it is about: a short dense TTFT
    rng = serving_range(0.005, "ttft", "dense")
    assert rng.high / rng.low > WIDEST_WITHOUT_REASON
    reason = wide_range_reason("ttft", "dense", rng)
    assert reason is not None and reason.id == "serving.range.wide.fixed"
