"""The speed refits estimate rows with their typical values only (estimate/speed/result.py
typical_only, used by scripts/calibrate.py's row results): every validation row's predicted
value and modelled-or-not are exactly those of the full estimate, no confidence is worked out
inside, and nothing of it outlives the block."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from paths import ROOT
from whichgpu.estimate.speed import result
from whichgpu.estimate.validation import default_path, read_rows, speed


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    """One row per (category, engine, metric, latency mode): every estimate path the refits
    score (decode, prefill, serving, training, MFU, diffusion, image, the client's latency)."""
    seen: dict[tuple, dict[str, str]] = {}
    for r in read_rows(default_path("speed")):
        key = (r.get("category"), r.get("engine"), r.get("metric"),
               speed.speed_settings(r)[1].get("latency_mode"))
        seen.setdefault(key, r)
    assert len(seen) > 40
    return list(seen.values())


def _outcomes(rows):
    return speed.evaluate(rows, speed.predict, speed.measured)


def test_typical_values_are_exactly_the_full_estimates(rows):
    full = _outcomes(rows)
    with result.typical_only():
        bare = _outcomes(rows)
    assert [o.predicted for o in bare] == [o.predicted for o in full]
    assert sum(o.predicted is not None for o in full) >= 40
    # the ranges really were skipped: width 1 inside, the real band outside
    widths = [(b.low, b.high) for b, f in zip(bare, full, strict=True) if f.predicted]
    assert all(lo == hi for lo, hi in widths)
    assert any(f.low is not None and f.low < f.high for f in full)


def test_no_confidence_is_worked_out_inside_and_none_is_kept(rows, monkeypatch):
    first = rows[0]
    (before,) = _outcomes([first])

    def refuse(*args, **kwargs):
        raise AssertionError("confidence worked out inside typical_only")

    monkeypatch.setattr(result, "_confidence_for", refuse)
    with result.typical_only():
        (bare,) = _outcomes([first])
    assert bare.predicted == before.predicted
    monkeypatch.undo()
    (after,) = _outcomes([first])
    assert (after.predicted, after.low, after.high, after.note) == (
        before.predicted, before.low, before.high, before.note)
    assert "not worked out" not in after.note


def test_calibrate_scores_rows_with_typical_values_only(rows, monkeypatch):
    spec = importlib.util.spec_from_file_location("calibrate_typical_only",
                                                  ROOT / "scripts/calibrate.py")
    assert spec is not None and spec.loader is not None
    cal = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = cal
    spec.loader.exec_module(cal)
    some = rows[:12]
    expected = [cal._result(o) for o in _outcomes(some)]
    monkeypatch.setattr(result, "_confidence_for", lambda *a, **k: 1 / 0)
    assert cal._row_results(some) == expected  # no memo
    with cal.memo_scope():
        assert cal._row_results(some) == expected  # the refits' memo
