"""scripts/calibrate.py keeps each group's grid search by its inputs (_grid_search): a fit of
the same group on the same rows from the same constant values takes the values chosen before
instead of searching the grid again (validate speed's leave-one-GPU-out refits take
calibrate.py --check's), the same values a search gives; other starting values or other
calibration rows search again; and the choices travel in the memo file
(WHICHGPU_SPEED_ROW_MEMO) to another load."""

from __future__ import annotations

import pytest

from calibrate_script import calibrate
from whichgpu.estimate.constants import overridden, speed_value
from whichgpu.estimate.validation import default_path, read_rows, split_of

LABEL = "ExLlamaV2 decode bandwidth"  # one constant, 21 grid points, a handful of rows


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [r for r in read_rows(default_path("speed"))
            if r["category"] == "decode" and r["engine"] == "exllamav2"]


def _fit(cal, rows, searched: list[int]) -> tuple[dict, dict]:
    """The group fitted on ``rows`` from the constants as they are (put back afterwards),
    the grid points it scored added to ``searched``."""
    objective = cal._objective

    def counted(errs):
        searched[0] += 1
        return objective(errs)

    start = cal._snapshot()
    cal._objective = counted
    try:
        return cal.fit_groups(rows, report=lambda *a: None, only={LABEL})
    finally:
        cal._objective = objective
        cal._restore(start)


def test_the_same_fit_again_takes_the_kept_choice(rows, monkeypatch):
    monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO", raising=False)
    cal = calibrate("calibrate_fit_memo")
    first, again = [0], [0]
    with cal.memo_scope():
        chosen, notes = _fit(cal, rows, first)
        assert _fit(cal, rows, again) == (chosen, notes)
    assert chosen, f"{LABEL} should be fitted on these rows"
    assert first[0] == 21 and again[0] == 0
    fresh = [0]
    assert _fit(calibrate("calibrate_fit_memo_fresh"), rows, fresh) == (chosen, notes)
    assert fresh[0] == 21  # a new outermost scope starts without the kept choices


def test_other_starting_values_search_the_grid_again(rows, monkeypatch):
    monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO", raising=False)
    cal = calibrate("calibrate_fit_memo_other")
    value = speed_value("decode_bandwidth_efficiency")
    moved = value | {"exllamav2": 0.613}  # off the grid: a tie would keep it
    first, other = [0], [0]
    with cal.memo_scope():
        _fit(cal, rows, first)
        with overridden("speed_constants", "decode_bandwidth_efficiency", moved):
            _fit(cal, rows, other)
        # the same rows but one calibration row measured 10 % faster (rows are keyed by
        # their content, not their ids)
        split = [split_of(r["id"]) for r in rows]
        k = split.index("calibration")
        faster = [*rows[:k], rows[k] | {"value": repr(float(rows[k]["value"]) * 1.1)},
                  *rows[k + 1:]]
        remeasured = [0]
        _fit(cal, faster, remeasured)
    assert first[0] == other[0] == remeasured[0] == 21


def test_the_choices_travel_in_the_memo_file(rows, tmp_path, monkeypatch):
    monkeypatch.setenv("WHICHGPU_SPEED_ROW_MEMO", str(tmp_path / "rows.pickle"))
    first, second = [0], [0]
    kept = _fit(calibrate("calibrate_fit_memo_a"), rows, first)
    assert _fit(calibrate("calibrate_fit_memo_b"), rows, second) == kept
    assert first[0] == 21 and second[0] == 0
    assert calibrate("calibrate_fit_memo_c")._read_memo(tmp_path / "rows.pickle").fits
