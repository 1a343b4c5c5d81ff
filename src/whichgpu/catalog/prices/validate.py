"""Plausibility checks every stored offer passes, whatever its source (refresh or import).

* the currency is an ISO 4217 code with a rate in whichgpu's dated exchange-rate table, so
  that every command can compare and convert it (an offer in ``ZZZ`` would break them all);
* the price per GPU-hour, in USD at the table's rates, lies within
  [:data:`MIN_USD_PER_GPU_HOUR`, :data:`MAX_USD_PER_GPU_HOUR`];
* the observation date is not in the future (:data:`FUTURE_TOLERANCE_S` of clock skew allowed);
* billing steps and minimum charges are at most :data:`MAX_BILLING_S` (a month).
"""

from __future__ import annotations

import math
from datetime import datetime

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.sources import parse_time
from whichgpu.units import Money

#: The shipped market snapshot (SkyPilot catalog, read 2026-12-01) ranges from $0.07 per
#: GPU-hour (an RTX 3060 on Vast, 4 x $0.29/h) to $7.99 (a B200 on RunPod). The bounds sit
#: about 7x below and 12x above that range: wide enough for any real rental, narrow enough to
#: refuse cents read as dollars the other way round, $1e-300 or $1e300.
MIN_USD_PER_GPU_HOUR = 0.01
MAX_USD_PER_GPU_HOUR = 100.0
#: A month: the longest billing step or minimum a rental offer plausibly has.
MAX_BILLING_S = 31 * 86400.0
FUTURE_TOLERANCE_S = 86400.0


def usd_per_gpu_hour(offer: Offer) -> float:
    """The offer's price per GPU-hour in USD at the dated rates (InputError: no rate)."""
    from whichgpu.currency import convert  # the one dated rate table, read lazily

    per_gpu = offer.price_per_gpu_hour
    return convert(Money(per_gpu.amount, per_gpu.currency), "USD").amount


def known_currency(code: str) -> bool:
    from whichgpu.currency import default_rates

    return code in default_rates().currencies()


def offer_problem(offer: Offer, *, now: datetime) -> tuple[str, str] | None:
    """``(field, reason)`` when the offer is implausible, else None."""
    cur = offer.price_per_hour.currency
    if not known_currency(cur):
        return ("currency", f"{cur} has no exchange rate in whichgpu's dated table, so no "
                "command could compare it; give the price in a currency the table has "
                "(USD, EUR, GBP, ...)")
    usd = usd_per_gpu_hour(offer)
    if not math.isfinite(usd) or not MIN_USD_PER_GPU_HOUR <= usd <= MAX_USD_PER_GPU_HOUR:
        return ("price_per_hour", f"{offer.price_per_gpu_hour.amount:.6g} {cur} per GPU-hour "
                f"(${usd:.4g}) is outside the plausible ${MIN_USD_PER_GPU_HOUR:g}-"
                f"{MAX_USD_PER_GPU_HOUR:g} per GPU-hour; a unit error?")
    for name, value in (("billing_increment_s", offer.billing.increment_s),
                        ("billing_minimum_s", offer.billing.minimum_s)):
        if not math.isfinite(value) or value > MAX_BILLING_S:
            return (name, f"{value:.6g} s is more than a month ({MAX_BILLING_S:g} s)")
    seen = parse_time(offer.observed_at)
    if seen is not None and (seen - now).total_seconds() > FUTURE_TOLERANCE_S:
        return ("observed_at", f"{offer.observed_at} is in the future")
    return None
