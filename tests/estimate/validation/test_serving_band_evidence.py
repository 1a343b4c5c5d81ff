"""What the serving bands' coverage depends on (issue 30, cov30): measured neighbours of a
row's configuration, a calibration source checked against the bands derived without it (what a
held-out source sees), and the holdout's coverage balanced over its sources."""

from __future__ import annotations

import math

import pytest

from whichgpu.estimate import serving_fit
from whichgpu.estimate.validation import Outcome
from whichgpu.estimate.validation.coverage_by_source import (
    Neighbours,
    new_source_coverage,
    new_source_scale,
    proximity,
    source_bootstrap,
)
from whichgpu.estimate.validation.serving import balanced, holdout_by_source

DENSE = "meta-llama/Llama-3.1-8B-Instruct"
HELD = frozenset({"held"})


def _row(rid: str, source: str, run: str, *, gpu: str = "h100-sxm", engine: str = "vllm",
         metric: str = "output_tokens_per_s", value: float = 1000.0) -> dict[str, str]:
    return {"id": rid, "group": f"{source}-{run}", "model": DENSE, "engine": engine, "gpu": gpu,
            "metric": metric, "value": str(value)}


def test_neighbours_are_calibration_runs_of_the_same_configuration_from_other_sources():
    rows = [_row("a1", "a", "r1"), _row("a2", "a", "r2"),  # two runs of source a
            _row("b1", "b", "r1"),  # one run of source b, same configuration
            _row("c1", "c", "r1", gpu="a100-80gb-sxm"),  # another card
            _row("d1", "d", "r1", engine="sglang"),  # another engine
            _row("e1", "e", "r1", metric="ttft_ms_mean"),  # another metric family
            _row("h1", "held", "r1")]  # a held-out run: never a neighbour
    near = Neighbours(rows, HELD)
    assert near.of(rows[0]) == 1  # b's run; not a's own second run
    assert near.of(rows[2]) == 2  # a's two runs
    assert near.of(rows[-1]) == 3  # a held-out row sees every calibration run of its config
    assert near.of(rows[3]) == near.of(rows[4]) == near.of(rows[5]) == 0


def _residual_rows(monkeypatch) -> tuple[list[dict[str, str]], dict[str, float]]:
    """Two calibration sources that disagree: a (10 rows, estimate about right) and b (10 rows,
    measured e^1 = 2.7x the estimate)."""
    monkeypatch.setattr(serving_fit.vs, "split_rule", lambda *a: frozenset())
    rows = [_row(f"a{i}", "a", f"r{i}") for i in range(10)]
    rows += [_row(f"b{i}", "b", f"r{i}") for i in range(10)]
    residuals = {f"a{i}": 0.005 * i for i in range(10)}
    residuals |= {f"b{i}": 1.0 + 0.005 * i for i in range(10)}
    return rows, residuals


def test_a_source_unlike_the_others_falls_outside_the_bands_made_without_it(monkeypatch):
    rows, residuals = _residual_rows(monkeypatch)
    cov = new_source_coverage(rows, residuals)["throughput"]
    # without b, the band is a's narrow one: none of b's rows; without a, b's band (which
    # always holds the estimate itself, ratio 1) holds a's rows
    assert cov["by_source"] == {"a": {"inside": 10, "n": 10}, "b": {"inside": 0, "n": 10}}
    assert cov["pooled"] == cov["balanced"] == 0.5
    # the band rule's own check, one row left out at a time, keeps each source's other rows
    # in the band and so does not see it
    assert serving_fit.loo_share(rows, residuals, "throughput") > 0.75


def test_holdout_coverage_balanced_over_sources_gives_each_source_one_vote():
    rows = [_row(f"t{i}", "big", f"r{i}") for i in range(9)] + [_row("s0", "small", "r0")]
    outs = [Outcome(r["id"], "throughput", "holdout", 1000.0, 1000.0, "tok/s", low=900.0,
                    high=1100.0 if r["id"] != "s0" else 950.0) for r in rows]
    cov = holdout_by_source(outs, rows)["throughput"]
    assert (cov["inside"], cov["n"]) == (9, 10)
    assert cov["pooled"] == pytest.approx(0.9)
    assert cov["balanced"] == pytest.approx(0.5)  # big 9/9, small 0/1
    assert balanced({}) is None


def test_proximity_splits_rows_by_measured_neighbours(monkeypatch):
    monkeypatch.setattr(serving_fit.vs, "split_rule", lambda *a: HELD)
    rows = [_row("a1", "a", "r1"), _row("b1", "b", "r1"),
            _row("c1", "c", "r1", gpu="a100-80gb-sxm"), _row("h1", "held", "r1"),
            _row("h2", "held", "r2", gpu="l40s")]
    residuals = {"a1": math.log(1.1), "b1": math.log(0.9), "c1": math.log(2.0)}
    outs = [Outcome("h1", "throughput", "holdout", 1200.0, 1000.0, "tok/s", low=800.0,
                    high=1250.0),
            Outcome("h2", "throughput", "holdout", 500.0, 1000.0, "tok/s", low=800.0,
                    high=1250.0)]
    cells = {(c["metric"], c["model_family"], c["neighbours"]): c
             for c in proximity(rows, residuals, outs)}
    near, alone = cells[("throughput", "dense", True)], cells[("throughput", "dense", False)]
    assert near["calibration"]["n"] == 2 and alone["calibration"]["n"] == 1
    assert near["calibration"]["median_abs_error"] == pytest.approx(0.1)
    assert alone["calibration"]["median_abs_error"] == pytest.approx(1.0)
    assert (near["holdout_inside"], near["holdout_ranged"]) == (1, 1)
    assert (alone["holdout_inside"], alone["holdout_ranged"]) == (0, 1)


def test_validate_serving_reports_the_holdout_per_source_and_the_table_shows_it():
    from whichgpu.estimate.validation.serving import ranges_of
    from whichgpu.estimate.validation.tables import _balanced

    rows = [_row(f"t{i}", "big", f"r{i}") for i in range(3)] + [_row("s0", "small", "r0")]
    outs = [Outcome(r["id"], "throughput", "holdout", 1000.0, 1000.0, "tok/s", low=900.0,
                    high=1100.0 if r["id"] != "s0" else 950.0) for r in rows]
    got = ranges_of(outs, rows)["ranges_holdout_by_source"]["throughput"]
    assert got["by_source"] == {"big": {"inside": 3, "n": 3}, "small": {"inside": 0, "n": 1}}
    assert _balanced(got) == "50 % (2 sources)"
    assert _balanced(None) == "–"


def test_the_widening_a_new_source_rule_would_need_is_the_first_that_reaches_75(monkeypatch):
    rows, residuals = _residual_rows(monkeypatch)
    # a source that disagrees by e^1: no factor up to 2 brings it in
    assert new_source_scale(rows, residuals, "throughput", None, None) is None
    # one a little off (measured 1.03-1.08x where a is 1.00-1.05x): some widening does
    residuals |= {f"b{i}": 0.03 + 0.005 * i for i in range(10)}
    got = new_source_scale(rows, residuals, "throughput", None, None)
    assert got is not None and got[0] > 1.0 and got[1] >= 0.75
    below = max(f for f in serving_fit.SCALE_GRID if f < got[0])
    short = new_source_coverage(rows, residuals, None, {"throughput": below})["throughput"]
    assert short["balanced"] < 0.75


def test_resampling_sources_shows_how_little_two_sources_pin_down():
    assert source_bootstrap({"a": {"inside": 5, "n": 5}}) == (1.0, 1.0)
    lo, hi = source_bootstrap({"a": {"inside": 10, "n": 10}, "b": {"inside": 0, "n": 10}})
    assert (lo, hi) == (0.0, 1.0)  # a alone twice, b alone twice: each a quarter of draws


def test_validate_serving_prints_the_holdout_balanced_over_its_sources(capsys):
    from whichgpu.cli.serving_view import print_validation

    target = {"n": 0, "median_abs_error": None, "target": 0.2, "met": False}
    report = {"rows": [], "by_family": [], "by_engine": [], "by_gpu": [], "by_source": [],
              "split_rule": ["big", "small"],
              "holdout_targets": {k: target for k in ("max_throughput", "ttft", "tpot")},
              "ranges_holdout_by_source": {"throughput": {
                  "inside": 9, "n": 10, "pooled": 0.9, "balanced": 0.5,
                  "by_source": {"big": {"inside": 9, "n": 9}, "small": {"inside": 0, "n": 1}}}}}
    print_validation(report)
    out = " ".join(capsys.readouterr().out.split())
    assert "Holdout inside the range: throughput 9/10, 50% balanced over 2 source(s)." in out
