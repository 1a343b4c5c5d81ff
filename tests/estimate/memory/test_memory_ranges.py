"""A memory estimate states an 80 % range (issue 30): exp(-+u), u the 80th percentile of
|log(measured / estimated)| of the memory validation's calibration rows of its task group
(make calibrate writes ``memory_range``); the validation checks whole-job measurements against
that range, and the answer says it."""

from __future__ import annotations

import math

import pytest

from calibrate_script import calibrate as _calibrate
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.estimate.constants import memory_value
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation import memory as validation_memory


@pytest.fixture(scope="module")
def outcomes():
    return validation_memory.run(default_path("memory"))


def test_the_shipped_range_is_what_make_calibrate_derives():
    values, counts = _calibrate().memory_ranges()
    assert values == memory_value("memory_range")
    assert counts["training"] >= 20


def test_the_range_holds_about_80_percent_of_the_calibration_rows(outcomes):
    cal = _calibrate()
    lo, hi = memory_value("memory_range")["training"]
    assert lo < 1 < hi and math.isclose(math.log(hi), -math.log(lo), abs_tol=0.002)
    rows = [o for o in outcomes if o.split == "calibration" and o.error is not None
            and o.category in cal.MEMORY_GROUPS["training"]]
    inside = sum(lo <= o.measured / o.predicted <= hi for o in rows)
    # the 80th percentile of |log ratio|: 80 % of the rows, give or take one row's share
    assert abs(inside / len(rows) - 0.8) <= 1 / len(rows) + 1e-9


def test_validation_checks_whole_job_rows_against_the_stated_range(outcomes):
    ranges = memory_value("memory_range")
    ranged = [o for o in outcomes if o.low is not None]
    assert ranged
    for o in ranged:
        ratios = (o.low / o.predicted, o.high / o.predicted)
        assert any(ratios == pytest.approx(tuple(r)) for r in ranges.values()), o.id
        assert o.inside == (o.low <= o.measured <= o.high)


def test_the_memory_answer_states_its_range():
    lo, hi = memory_value("memory_range")["inference"]
    why = str(estimate_memory(build_workload("llama-3.1-8b")).confidence().why)
    assert f"{lo - 1:+.0%} to {hi - 1:+.0%} of the estimate" in why
