"""The speed constants are what `make calibrate` produces, fitted on calibration rows only,
never on a single row, and `validate speed` reports how often the ranges hold on the holdout."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from calibrate_script import calibrate as _calibrate
from paths import ROOT
from refit_cache import cached, shared_row_estimates
from whichgpu.estimate.constants import all_constants, speed_value


@pytest.fixture(scope="module")
def calibrate_check(request) -> dict:
    """`scripts/calibrate.py --check` run once for the module: its exit status, the end of
    what it printed, and which constants its fit wrote a `fitted` note for (read from the
    same run's full fit on every calibration row, not from a second fit). A passing check
    is kept for the same inputs, and its row estimates are shared with the other speed
    refits: tests/refit_cache.py."""
    def check() -> dict:
        calibrate = _calibrate()
        fit_groups = calibrate.fit_groups
        seen: list[dict] = []

        def recording(*args, **kwargs):
            chosen, notes = fit_groups(*args, **kwargs)
            if kwargs.get("calib_ids") is None and kwargs.get("only") is None:  # the full fit
                seen.append(notes)
            return chosen, notes

        calibrate.fit_groups = recording
        out = io.StringIO()
        with contextlib.redirect_stdout(out), shared_row_estimates(request.config):
            status = calibrate.main(["--check"])
        return {"status": status, "out": out.getvalue()[-3000:],
                "fitted": sorted(seen[0]) if len(seen) == 1 else None}

    return cached(request.config, "calibrate-check-fitted", check, keep=lambda r: r["status"] == 0)


def test_the_toml_is_exactly_what_make_calibrate_produces(calibrate_check):
    """Fitted values, bands, band evidence and measured GPUs: `scripts/calibrate.py --check`
    reruns every fit and derivation on validation/speed.csv and compares."""
    assert calibrate_check["status"] == 0, calibrate_check["out"]


def test_every_fitted_constant_says_how_many_calibration_rows_it_was_fitted_on(calibrate_check):
    """A group the calibration rows support writes a `fitted` line naming its row count (at
    least MIN_ROWS_PER_PARAMETER per constant); a group with too few rows is left a prior."""
    calibrate = _calibrate()
    notes = calibrate_check["fitted"]
    assert notes is not None, "calibrate.py --check should fit the groups once"
    text = (ROOT / "src/whichgpu/estimate/data/speed_constants.toml").read_text("utf-8")
    groups = {c for _, params, _, _ in calibrate.GROUPS for c, _ in params}
    assert set(notes) <= groups and notes
    for name in groups:
        block = text[text.index(f"[constant.{name}]"):]
        block = block[:block.index("\n\n")]
        lines = [ln for ln in block.splitlines() if ln.startswith("fitted = ")]
        if name not in notes:
            assert not lines, f"{name} says it was fitted, but no group fitted it"
            continue
        assert lines, f"{name} has no fitted line"
        counts = [int(n) for n in re.findall(r"on (\d+) calibration rows", lines[0])]
        assert counts and min(counts) >= calibrate.MIN_ROWS_PER_PARAMETER, name
        assert name in all_constants("speed_constants")


def test_a_group_with_too_few_rows_is_not_fitted(monkeypatch):
    calibrate = _calibrate()
    rows = [{"id": "x", "category": "decode", "engine": "exllamav2", "model": "m",
             "task": "inference", "gpu": "rtx-4090", "metric": "decode_tokens_per_s",
             "value": "100"}]
    monkeypatch.setattr(calibrate, "split_of", lambda row_id: "calibration")
    monkeypatch.setattr(calibrate, "_modelled", lambda row: True)
    monkeypatch.setattr(calibrate, "GROUPS", [calibrate.GROUPS[3]])
    lines: list[str] = []
    chosen, notes = calibrate.fit_groups(rows, report=lines.append)
    assert chosen == {} and notes == {}
    assert any("not fitted" in ln for ln in lines)


def test_the_80_percent_interval_widens_for_small_samples():
    calibrate = _calibrate()
    sample = [-0.1, 0.05, 0.1, -0.05, 0.0]
    lo5, hi5 = calibrate.interval80(sample)
    lo20, hi20 = calibrate.interval80(sample * 4)
    assert lo5 < lo20 < 0 < hi20 < hi5


def test_validate_speed_reports_each_rows_range_and_the_holdout_coverage(cli):
    res = cli("validate", "speed", "--split", "holdout", "--no-cross-validation", "--json")
    assert res.code == 0
    data = res.json()
    ranged = [r for r in data["rows"] if r.get("low") is not None]
    assert len(ranged) >= 40
    for r in ranged:
        assert r["low"] <= r["predicted"] <= r["high"]
        assert r["inside"] == (r["low"] <= r["measured"] <= r["high"])
    summary = {s["category"]: s for s in data["summary"]}
    inside = [r["inside"] for r in ranged]
    assert summary["all"]["coverage"] == pytest.approx(sum(inside) / len(inside))
    text = cli("validate", "speed", "--split", "holdout", "--no-cross-validation")
    assert "Inside range" in text.out


def test_the_bands_cover_at_least_the_typical():
    for cat, (lo, hi) in speed_value("band_ratios").items():
        assert lo <= 1.0 <= hi, cat
