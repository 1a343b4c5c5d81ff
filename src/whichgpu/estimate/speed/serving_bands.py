"""The low / high of serving estimates: 80 % prediction intervals of measured / estimated,
per metric family (throughput, TTFT, TPOT, end-to-end), from the calibration sources of
validation/serving.csv (written by scripts/calibrate_serving.py). A family without enough
calibration rows takes the speed model's low-confidence prior. TTFT's band also has a fixed
part (``band_offset_ms``): the first-token cost that published setups differ on, which a plain
ratio would spread over long TTFTs (issue 30)."""

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


def band_offset_ms(family: str, model_family: str | None = None) -> float:
    """The fixed part (ms) of a time's band (``band_offset_ms``: TTFT's first-token cost that
    published setups differ on), where ``family`` has a band of its own; else 0."""
    if band_group(family, model_family) is None:
        return 0.0
    constants = _load("serving_constants")
    offsets = constants["band_offset_ms"].value if "band_offset_ms" in constants else {}
    return float(offsets.get(family, 0.0))


# a band with a fixed part never puts the low end below this share of the estimate
MIN_LOW_SHARE = 0.2


def offset_bounds(typical: float, lo: float, hi: float, offset: float) -> tuple[float, float]:
    """(low, high) of ``typical`` for a band (lo, hi) of (measured + offset) / (estimated +
    offset), ``offset`` in typical's unit: the band spreads the proportional part and the fixed
    part that sources differ on, not the fixed part in proportion to a long time. 0: a plain
    ratio band."""
    if offset <= 0:
        return typical * lo, typical * hi
    low = max((typical + offset) * lo - offset, MIN_LOW_SHARE * typical)
    high = (typical + offset) * hi - offset
    # a band edge of exactly 1 (ttft/moe's low end) must give the typical value itself, not
    # (typical + offset) - offset, which rounding can put a hair past it
    return min(low, typical), max(high, typical)


def serving_range(typical: float, family: str, model_family: str | None = None, *,
                  in_ms: bool = False) -> Range:
    """A typical value with its band: measured / estimated ratios apply to the value itself
    (TTFT's with its fixed part, :func:`offset_bounds`), so a time's slow end is its high.
    ``typical``: seconds for a time unless ``in_ms``."""
    lo, hi = serving_band(family, model_family)
    offset = band_offset_ms(family, model_family) / (1.0 if in_ms else 1e3)
    low, high = offset_bounds(typical, lo, hi, offset)
    return Range(low, typical, high)


# issue 30: a range wider than this says why (the speed model's rule, result.py)
WIDEST_WITHOUT_REASON = 5.0


def band_group(family: str, model_family: str | None = None) -> str | None:
    """The band_ratios key :func:`serving_band` takes (None: the low-confidence prior)."""
    constants = _load("serving_constants")
    bands = constants["band_ratios"].value if "band_ratios" in constants else {}
    return next((k for k in (f"{family}/{model_family}", family) if k in bands), None)


def wide_range_reason(family: str, model_family: str | None = None,
                      rng: Range | None = None) -> Message | None:
    """Why a serving range of ``family`` (throughput, ttft, tpot) is wider than
    WIDEST_WITHOUT_REASON (high / low), or None when it is not. ``rng``: the range as given
    (a TTFT's width depends on its length); None: the band's own width."""
    lo, hi = serving_band(family, model_family)
    width = hi / lo
    if rng is not None and rng.low > 0:
        width = rng.high / rng.low
    if width <= WIDEST_WITHOUT_REASON:
        return None
    what = {"throughput": "throughput", "ttft": "TTFT", "tpot": "TPOT"}.get(family, family)
    if band_group(family, model_family) is None:
        return msg("serving.range.wide.prior", "the {what} range is {width:.1f}x wide: too few "
                   "published {what} measurements for an interval of its own, so the wide "
                   "prior applies", what=what, width=width)
    offset = band_offset_ms(family, model_family)
    if hi / lo <= WIDEST_WITHOUT_REASON and offset > 0:
        return msg("serving.range.wide.fixed", "the {what} range is {width:.1f}x wide because "
                   "it is short: published setups differ by about {offset:g} ms in the fixed "
                   "first-token cost (API server, tokenizer, scheduler), most of a {what} this "
                   "short", what=what, width=width, offset=offset)
    # "four in five": of the calibration rows, each estimated without its own source's rows;
    # a source unlike them holds fewer (issue 30, balanced over the calibration's sources with
    # each left out of the bands too: throughput 63 %, TTFT 67 %, TPOT 52 %;
    # estimate/validation/coverage_by_source.py), which the sentence says
    return msg("serving.range.wide", "the {what} range is {width:.1f}x wide because published "
               "{what} measurements of {models} models scatter that much around the estimate "
               "(four in five of them fall inside it, each estimated without its own source's "
               "rows; a setup unlike those published can fall outside)",
               what=what, width=width, models=model_family or "all")


def wide_range_reasons(model_family: str | None, ranges: dict[str, Range | None]
                       ) -> list[Message]:
    """:func:`wide_range_reason` of each family (throughput, ttft, tpot) -> its range."""
    return [m for f, r in ranges.items() if (m := wide_range_reason(f, model_family, r))
            is not None]
