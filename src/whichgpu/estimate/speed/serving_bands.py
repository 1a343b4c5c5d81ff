"""The low / high of serving estimates: 80 % prediction intervals of measured / estimated,
per metric family (throughput, TTFT, TPOT, end-to-end), from the calibration sources of
validation/serving.csv (written by scripts/calibrate_serving.py). A family without enough
calibration rows takes the speed model's low-confidence prior."""

from __future__ import annotations

from whichgpu.estimate.constants import _load, speed_constant
from whichgpu.messages import Message, msg
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


# issue 30: a range wider than this says why (the speed model's rule, result.py)
WIDEST_WITHOUT_REASON = 5.0


def band_group(family: str, model_family: str | None = None) -> str | None:
    """The band_ratios key :func:`serving_band` takes (None: the low-confidence prior)."""
    constants = _load("serving_constants")
    bands = constants["band_ratios"].value if "band_ratios" in constants else {}
    return next((k for k in (f"{family}/{model_family}", family) if k in bands), None)


def wide_range_reason(family: str, model_family: str | None = None) -> Message | None:
    """Why a serving range of ``family`` (throughput, ttft, tpot) is wider than
    WIDEST_WITHOUT_REASON (high / low), or None when it is not."""
    lo, hi = serving_band(family, model_family)
    width = hi / lo
    if width <= WIDEST_WITHOUT_REASON:
        return None
    what = {"throughput": "throughput", "ttft": "TTFT", "tpot": "TPOT"}.get(family, family)
    if band_group(family, model_family) is None:
        return msg("serving.range.wide.prior", "the {what} range is {width:.1f}x wide: too few "
                   "published {what} measurements for an interval of its own, so the wide "
                   "prior applies", what=what, width=width)
    return msg("serving.range.wide", "the {what} range is {width:.1f}x wide because published "
               "{what} measurements of {models} models scatter that much around the estimate "
               "(four in five of them fall inside it when the fit leaves their source out)",
               what=what, width=width, models=model_family or "all")


def wide_range_reasons(model_family: str | None,
                       families: tuple[str, ...] = ("throughput", "ttft", "tpot")
                       ) -> list[Message]:
    """:func:`wide_range_reason` of each of ``families`` that has one."""
    return [m for f in families if (m := wide_range_reason(f, model_family)) is not None]
