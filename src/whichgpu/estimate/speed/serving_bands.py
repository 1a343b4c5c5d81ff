"""The low / high of serving estimates: 80 % prediction intervals of measured / estimated,
per metric family (throughput, TTFT, TPOT, end-to-end), from the calibration sources of
validation/serving.csv (written by scripts/calibrate_serving.py). A family without enough
calibration rows takes the speed model's low-confidence prior."""

from __future__ import annotations

from whichgpu.estimate.constants import _load, speed_constant
from whichgpu.units import Range

FAMILY_OF_TIME = {"ttft_s": "ttft", "tpot_s": "tpot", "e2e_s": "e2e"}


def serving_band(family: str, model_family: str | None = None) -> tuple[float, float]:
    """(low, high) multipliers of a typical value of ``family`` (throughput, ttft, tpot, e2e),
    for a model family (dense, moe, moe-mla) where the calibration has a band for it."""
    constants = _load("serving_constants")
    bands = constants["band_ratios"].value if "band_ratios" in constants else {}
    for key in (f"{family}/{model_family}", family):
        if key in bands:
            lo, hi = bands[key]
            return min(float(lo), 1.0), max(float(hi), 1.0)
    lo, hi = speed_constant("confidence_factors").value["low"]
    return float(lo), float(hi)


def serving_range(typical: float, family: str, model_family: str | None = None) -> Range:
    """A typical value with its band: measured / estimated ratios apply to the value itself,
    so a time's slow end is its high."""
    lo, hi = serving_band(family, model_family)
    return Range(typical * lo, typical, typical * hi)
