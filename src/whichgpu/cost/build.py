"""Ownership (``tco``) and run cost (``cost``) from the strings a person types.

Shared by the CLI and the web API, so both read ``60%``, ``25000USD`` or ``2h..4h`` the same
way and fail with the same one-line reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.catalog.gpus import GPU, resolve_gpu
from whichgpu.cost.currency import RateTable, rates_from
from whichgpu.cost.ownership import Ownership, ownership, ownership_inputs
from whichgpu.cost.rent_or_buy import Advice, rent_or_buy
from whichgpu.errors import InputError
from whichgpu.units import Money, Range, check_currency, parse_duration, parse_money

DEFAULT_PRICES = "article-000"


def parse_fraction(text: str | None, what: str) -> float | None:
    """``0.6`` or ``60%`` -> 0.6; anything else is a clear error."""
    if text is None:
        return None
    s = str(text).strip().replace(",", ".")
    try:
        value = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise InputError(f"cannot read {text!r} as {what}; write 0.6 or 60%") from None
    if not s.endswith("%") and value > 1:
        raise InputError(f"{what} {text!r} is more than 1 (100 %); write a fraction such as 0.6 "
                         "or a percentage such as 60%")
    return value


def parse_flag_money(text: str | None, flag: str) -> Money | None:
    """Money for an option, with the option's name in the error."""
    if text is None:
        return None
    try:
        return parse_money(text)
    except InputError as exc:
        raise InputError(f"{flag}: {exc}") from None


def parse_duration_range(text: str) -> Range:
    """``3h20m`` (a point), ``2h..4h`` (typical = midpoint) or ``2h..3h..4h``."""
    parts = [parse_duration(p) for p in str(text).split("..")]
    if len(parts) == 1:
        return Range.point(parts[0])
    if len(parts) == 2:
        low, high = parts
        if low > high:
            raise InputError(f"duration range {text!r} must go from low to high")
        return Range(low, (low + high) / 2, high)
    if len(parts) == 3 and parts[0] <= parts[1] <= parts[2]:
        return Range(*parts)
    raise InputError(f"cannot read {text!r} as a duration range; write 3h20m, 2h..4h or "
                     "2h..3h..4h (low..typical..high)")


@dataclass(frozen=True)
class TcoResult:
    """What ``whichgpu tco`` computes: the ownership model and, with a rent price, the advice."""

    gpu: GPU
    ownership: Ownership
    advice: Advice | None
    prices: str | None  # the offer set the rent price came from (None: given)
    resolution_note: str | None = None
    selection: Any = None  # the OfferSelection read (with its ages), None if none was read

    def to_json(self, curve: bool = True) -> dict[str, Any]:
        data = self.ownership.to_json(curve=curve)
        data["prices"] = self.prices
        data["advice"] = self.advice.to_json() if self.advice else None
        if self.resolution_note:
            data["resolution_note"] = self.resolution_note
        return data


def tco(gpu_id: str, *, purchase_price: str | None = None, resale_value: str | None = None,
        years: float | None = None, host_share: str | None = None, tdp: float | None = None,
        load_factor: float | None = None, utilization: str | None = None,
        hours_per_month: float | None = None, kwh_price: str | None = None,
        pue: float | None = None, cooling_per_hour: str | None = None,
        maintenance_per_year: str | None = None, rent_price: str | None = None,
        prices: str = DEFAULT_PRICES, currency: str | None = None,
        rate: list[str] | None = None) -> TcoResult:
    """Owning ``gpu_id`` vs renting it: defaults from the catalog, ``prices`` and S9/S11."""
    from whichgpu.catalog.prices import current_offers

    if utilization is not None and hours_per_month is not None:
        raise InputError("give --utilization or --hours-per-month, not both")
    if hours_per_month is not None and not (0 < hours_per_month <= 730):
        raise InputError(f"--hours-per-month must be more than 0 and at most 730 (24/7), "
                         f"got {hours_per_month:g}")
    util = (hours_per_month / 730 if hours_per_month is not None
            else parse_fraction(utilization, "utilisation"))
    rates: RateTable = rates_from(rate or [])
    res = resolve_gpu(gpu_id)
    selection = current_offers(prices) if rent_price is None else None
    offers = list(selection.offers) if selection is not None else None
    inputs = ownership_inputs(
        res.gpu, offers=offers, rates=rates,
        purchase_price=parse_flag_money(purchase_price, "--purchase-price"),
        resale_value=parse_flag_money(resale_value, "--resale-value"), years=years,
        host_share=parse_flag_money(host_share, "--host-share"), tdp_watts=tdp,
        load_factor=load_factor, utilization=util,
        kwh_price=parse_flag_money(kwh_price, "--kwh-price"), pue=pue,
        cooling_per_hour=parse_flag_money(cooling_per_hour, "--cooling-per-hour"),
        maintenance_per_year=parse_flag_money(maintenance_per_year, "--maintenance-per-year"),
        rent_price=parse_flag_money(rent_price, "--rent-price"),
        currency=check_currency(currency) if currency else None)
    o = ownership(inputs, rates)
    advice = rent_or_buy(inputs, rates) if o.rent_price is not None else None
    return TcoResult(res.gpu, o, advice, prices if rent_price is None else None, res.note,
                     selection)
