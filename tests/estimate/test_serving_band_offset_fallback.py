"""The TTFT band offset where no offset's unscaled bands hold 75-85 % of the calibration rows
(issue 30): each offset is scaled as the band-width rule would scale it and the narrowest
scaled median range is taken. Before, the choice fell to no offset at all, the widest TTFT
bands (3.66x on the calibration rows once the InferenceX H200 TTFT rows came in, against
2.91x scaled at the offset the rule now takes)."""

from __future__ import annotations

from whichgpu.estimate import serving_fit


def _fake(monkeypatch, coverage: dict[float, float], widths: dict[tuple[float, float], float],
          scale: float) -> None:
    def check(rows, residuals, metric, offset_ms, s=1.0):
        return coverage[offset_ms] if s == 1.0 else 0.8, widths[(offset_ms, s)]

    monkeypatch.setattr(serving_fit, "OFFSET_GRID_MS", tuple(coverage))
    monkeypatch.setattr(serving_fit, "offset_check", check)
    monkeypatch.setattr(serving_fit, "_scale_of", lambda *a: scale)


def test_an_offset_inside_the_coverage_is_taken_unscaled(monkeypatch):
    _fake(monkeypatch, {0.0: 0.74, 30.0: 0.78, 60.0: 0.80},
          {(0.0, 1.0): 3.6, (30.0, 1.0): 2.9, (60.0, 1.0): 2.8}, 1.05)
    assert serving_fit.band_offsets([], {}) == {"ttft": 60.0}


def test_with_none_inside_the_narrowest_scaled_range_wins_not_zero(monkeypatch):
    _fake(monkeypatch, {0.0: 0.74, 30.0: 0.71, 60.0: 0.71},
          {(0.0, 1.0): 3.6, (30.0, 1.0): 2.8, (60.0, 1.0): 2.77,
           (0.0, 1.05): 3.9, (30.0, 1.05): 2.95, (60.0, 1.05): 2.91}, 1.05)
    assert serving_fit.band_offsets([], {}) == {"ttft": 60.0}


def test_the_shipped_offset_is_what_the_rule_gave():
    """The shipped TTFT offset is not the no-offset fallback (calibrate_serving.py --check
    keeps the value equal to the script's)."""
    from whichgpu.estimate.speed.serving_bands import band_offset_ms

    assert band_offset_ms("ttft", "dense") > 0
