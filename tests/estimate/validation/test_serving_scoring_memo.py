"""The serving refits' scoring memo (estimate/validation/scoring_memo.py): inside the scope a
run is simulated again exactly when its rows, the holdout rule or a constant value changed, and
the outcomes are the ones the rows get without it."""

from __future__ import annotations

import pytest

from whichgpu.estimate.constants import overridden
from whichgpu.estimate.speed.serving_engine import serving_value
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.validation.scoring_memo import scoring_memo


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    """Every row of the first two modelled trtllm dense runs of the calibration sources."""
    every = read_rows(default_path("serving"))
    held = vs.split_rule()
    runs: list[str] = []
    for r in every:
        if (vs.source_of(r) not in held and (r.get("engine") or "").strip() == "trtllm"
                and r["group"] not in runs):
            runs.append(r["group"])
    picked = [r for r in every if r["group"] in runs[:2]]
    assert len({r["group"] for r in picked}) == 2
    return picked


@pytest.fixture
def simulated(monkeypatch) -> list[list[str]]:
    """The ids of the rows each simulation of a run was given, from now on."""
    calls: list[list[str]] = []
    real = vs._evaluate_rows

    def counted(rows, held):
        calls.append([r["id"] for r in rows])
        return real(rows, held)

    monkeypatch.setattr(vs, "_evaluate_rows", counted)
    return calls


def test_kept_outcomes_are_the_simulations_own(rows, simulated):
    plain = vs.evaluate_rows(rows)
    assert len(simulated) == 1  # outside the scope: one call, nothing kept
    assert any(o.predicted for o in plain)
    simulated.clear()
    with scoring_memo():
        first = vs.evaluate_rows(rows)
        assert len(simulated) == 2  # one per run
        again = vs.evaluate_rows(rows)
        assert len(simulated) == 2  # nothing simulated again
        one_run = [r for r in rows if r["group"] == rows[0]["group"]]
        assert vs.evaluate_rows(one_run) == [o for o in first if o.id in
                                             {r["id"] for r in one_run}]
        assert len(simulated) == 2
    assert plain == first == again
    vs.evaluate_rows(rows)
    assert len(simulated) == 3  # the scope ended: nothing kept


def test_a_changed_value_row_or_holdout_is_simulated_again(rows, simulated):
    step = dict(serving_value("serving_step_per_sequence_us"))
    key = "trtllm/dense" if "trtllm/dense" in step else next(iter(step))
    moved = {**step, key: float(step[key]) * 3 + 50}
    with scoring_memo():
        before = vs.evaluate_rows(rows)
        simulated.clear()
        with overridden("serving_constants", "serving_step_per_sequence_us", moved):
            changed = vs.evaluate_rows(rows)
            assert len(simulated) == 2
            with overridden("serving_constants", "serving_step_per_sequence_us", dict(moved)):
                assert vs.evaluate_rows(rows) == changed  # the same values in a new table
            assert len(simulated) == 2
        assert vs.evaluate_rows(rows) == before  # the values before: kept
        assert len(simulated) == 2
        scrambled = [{**r, "value": str(float(r["value"]) * 2)} if r is rows[0] else r
                     for r in rows]
        vs.evaluate_rows(scrambled)
        assert simulated[-1] == [r["id"] for r in rows if r["group"] == rows[0]["group"]]
        vs.evaluate_rows(rows, holdout=frozenset({vs.source_of(rows[0])}))
        assert len(simulated) == 5  # both runs again, under the other holdout rule
    assert [o.predicted for o in changed] != [o.predicted for o in before]
    with overridden("serving_constants", "serving_step_per_sequence_us", moved):
        assert vs.evaluate_rows(rows) == changed  # without the memo: the same numbers
