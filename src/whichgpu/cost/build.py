"""Ownership (``tco``) and run cost (``cost``) from the strings a person types.

Shared by the CLI and the web API, so both read ``60%``, ``25000USD`` or ``2h..4h`` the same
way, price with the same offers (the price store's current selection unless a source is
pinned) and fail with the same one-line reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.catalog.gpus import GPU, resolve_gpu
from whichgpu.cost.currency import RateTable, known_currency, rates_from
from whichgpu.cost.ownership import Ownership, ownership, ownership_inputs
from whichgpu.cost.rent_or_buy import Advice, rent_or_buy
from whichgpu.cost.task import TaskCost, duration_for, task_cost
from whichgpu.errors import InputError
from whichgpu.units import Money, Range, parse_count, parse_duration, parse_money

if TYPE_CHECKING:
    from whichgpu.catalog.prices import OfferSelection

#: No price source pinned: the latest prices of every source in the store (``current_offers``).
DEFAULT_PRICES = None
#: ``selection_for(prices, gpu_ids)``: the offers of those GPUs in a price source.
SelectionFor = Callable[[str | None, list[str]], "OfferSelection"]

# Bounds on a run (docs/ownership.md): far above any real job, so only slips trip them.
MAX_GPUS = 1_000_000  # the largest clusters reported hold a few hundred thousand GPUs
MAX_RUN_S = 10 * 365 * 86400.0  # ten years
MAX_WORK = 1e18  # units of work in one run (tokens, images ...)


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
        money = parse_money(text)
        return Money(money.amount, known_currency(money.currency))
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


_RATE_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
               "h": 3600.0, "hour": 3600.0, "d": 86400.0, "day": 86400.0}


def parse_rate_of_work(text: str) -> tuple[Range, float]:
    """``4/min``, ``4..6/min`` or ``300..500..700/s`` -> (units per period as a range, the
    period in seconds). S25: 4-6 images a minute is ``4..6/min``."""
    m = re.fullmatch(r"\s*([0-9.,e+\-]+(?:\.\.[0-9.,e+\-]+){0,2})\s*/\s*([a-z]+?)s?\s*",
                     str(text).lower())
    if not m or m.group(2) not in _RATE_UNITS:
        raise InputError(f"cannot read {text!r} as a rate of work; write it like 4/min, "
                         "4..6/min or 300..700/s (units per s, min, h or d)")
    try:
        parts = [float(p.replace(",", ".")) for p in m.group(1).split("..")]
    except ValueError:
        raise InputError(f"cannot read {text!r} as a rate of work; write it like 4..6/min"
                         ) from None
    if any(not math.isfinite(p) or p <= 0 for p in parts):
        raise InputError(f"a rate of work must be positive, got {text!r}")
    if parts != sorted(parts):
        raise InputError(f"rate of work {text!r} must go from low to high")
    rate = (Range.point(parts[0]) if len(parts) == 1 else
            Range(parts[0], (parts[0] + parts[1]) / 2, parts[1]) if len(parts) == 2 else
            Range(*parts))
    return rate, _RATE_UNITS[m.group(2)]


@dataclass(frozen=True)
class TcoResult:
    """What ``whichgpu tco`` computes: the ownership model and, with a rent price, the advice."""

    gpu: GPU
    ownership: Ownership
    advice: Advice | None
    prices: str | None  # the price source asked for (None: the store's current prices)
    resolution_note: str | None = None
    selection: Any = None  # the OfferSelection read (with its ages), None if none was read

    def to_json(self, curve: bool = True) -> dict[str, Any]:
        data = self.ownership.to_json(curve=curve)
        data["prices"] = self.prices
        if self.selection is not None:
            data["price_selection"] = self.selection.to_json()
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
        prices: str | None = DEFAULT_PRICES, currency: str | None = None,
        rate: list[str] | None = None, max_age: float | None = None,
        selection_for: SelectionFor | None = None,
        gpu_spec: str | None = None) -> TcoResult:
    """Owning ``gpu_id`` vs renting it: defaults from the catalog, the prices and S9/S11.

    ``gpu_id`` may be your own card's memory (``12GB``) and ``gpu_spec`` a full description
    (``memory=12GB,tdp=170W,price=329USD``): its price and power then come from the spec.

    ``prices`` pins a price source; None takes the store's current prices (every source,
    latest snapshot). ``selection_for(prices, gpu_ids)`` reads a selection (the web app passes
    its cache).
    """

    _check_max_age(max_age)
    if utilization is not None and hours_per_month is not None:
        raise InputError("give --utilization or --hours-per-month, not both")
    if hours_per_month is not None and not (0 < hours_per_month <= 730):
        raise InputError(f"--hours-per-month must be more than 0 and at most 730 (24/7), "
                         f"got {hours_per_month:g}")
    util = (hours_per_month / 730 if hours_per_month is not None
            else parse_fraction(utilization, "utilisation"))
    rates: RateTable = rates_from(rate or [])
    from whichgpu.catalog.user_gpu import resolve_gpu_arg

    res = resolve_gpu_arg(gpu_id, gpu_spec)
    if res is None:
        raise InputError("tco needs a GPU: a catalog id (tco h100) or --gpu-spec "
                         "memory=...,tdp=...,price=...")
    if res.gpu.user_spec and tdp is None and not res.gpu.tdp_watts:
        raise InputError(f"{res.gpu.id}: owning it costs electricity: give --tdp W (or "
                         "--gpu-spec tdp=W)")
    read = selection_for or _reader(max_age)
    selection = read(prices, [res.gpu.id]) if rent_price is None else None
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
        currency=known_currency(currency, rates) if currency else None)
    o = ownership(inputs, rates)
    advice = rent_or_buy(inputs, rates) if o.rent_price is not None else None
    return TcoResult(res.gpu, o, advice, prices if rent_price is None else None, res.note,
                     selection)


def _reader(max_age: float | None) -> SelectionFor:
    """Reads the GPUs' offers, the cheapest of each kind (all a run or a rent price can use)."""
    from whichgpu.catalog.prices import current_offers

    return lambda prices, gpus: current_offers(prices, max_age_days=max_age, gpus=gpus,
                                               cheapest_only=True)


def _check_max_age(max_age: float | None) -> None:
    if max_age is not None and not (math.isfinite(max_age) and max_age > 0):
        raise InputError(f"--max-age must be a positive number of days, got {max_age:g}")


# ---------------------------------------------------------------- cost of a run

@dataclass(frozen=True)
class CostResult:
    """What ``whichgpu cost`` computes: a run on the cheapest offer, in the display currency."""

    gpu: GPU
    task: TaskCost  # in the offer's currency
    shown: TaskCost  # in ``currency``
    currency: str
    rates: RateTable
    prices: str | None
    selection: Any  # the OfferSelection read
    resolution_note: str | None = None
    rate_of_work: str | None = None

    @property
    def converted(self) -> bool:
        return self.currency != self.task.offer.price_per_hour.currency

    def conversion_note(self) -> str | None:
        if not self.converted:
            return None
        return "converted: " + self.rates.describe_pair(self.task.offer.price_per_hour.currency,
                                                        self.currency)

    def assumptions(self) -> list[str]:
        notes = self.task.assumptions()
        if self.rate_of_work:
            notes.append(f"duration from the rate of work {self.rate_of_work}")
        if self.converted:
            notes.append(self.conversion_note())
        return notes

    def to_json(self) -> dict[str, Any]:
        data = self.shown.to_json()
        data["assumptions"] = self.assumptions()
        data["prices"] = self.prices
        data["price_selection"] = self.selection.to_json()
        data["currency"] = self.currency
        if self.converted:
            data["rates"] = self.rates.to_json()
        if self.rate_of_work:
            data["rate_of_work"] = self.rate_of_work
        if self.resolution_note:
            data["resolution_note"] = self.resolution_note
        return data


def cost(gpu_id: str, duration: str | None = None, *, count: int = 1,
         prices: str | None = DEFAULT_PRICES, spot: bool = False, work: str | None = None,
         unit: str = "task", per: str | None = None, rate_of_work: str | None = None,
         currency: str | None = None, rate: list[str] | None = None,
         max_age: float | None = None,
         selection_for: SelectionFor | None = None) -> CostResult:
    """What a run of ``duration`` (or of ``work`` at ``rate_of_work``) on ``count`` GPUs of
    ``gpu_id`` costs on the cheapest offer, under the offer's billing rule.

    ``prices`` pins a price source (None: the store's current prices). The amounts are shown in
    ``currency``, by default the currency of the GPU's offers (the selection's main currency when
    they are in several).
    """
    from whichgpu.catalog.offers import shipped_offer_sets
    from whichgpu.cost.billing import cheapest_offer

    _check_max_age(max_age)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_GPUS:
        raise InputError(f"--count must be a whole number from 1 to {MAX_GPUS:,}, got {count!r}")
    amount = _work(work)
    per_n = _per(per, amount)
    span = _duration(duration, rate_of_work, amount)
    rates = rates_from(rate or [])
    show = known_currency(currency, rates) if currency else None
    from whichgpu.catalog.user_gpu import is_memory_only

    if is_memory_only(gpu_id):
        raise InputError(f"cost prices a rented GPU, and {gpu_id!r} describes your own card: "
                         "it has no rental offers; 'whichgpu tco --gpu-spec memory=...,tdp=...,"
                         "price=...' gives what owning it costs per hour")
    res = resolve_gpu(gpu_id)
    g = res.gpu
    read = selection_for or _reader(max_age)
    selection = read(prices, [g.id])
    offers = list(selection.offers)
    same_gpu = [o for o in offers if o.gpu == g.id]
    where = prices or "the current prices"
    if not same_gpu:
        elsewhere = [s for s in shipped_offer_sets() if s != prices
                     and read(s, [g.id]).offers] if prices else []
        hint = f"; offer sets with it: {', '.join(elsewhere)}" if elsewhere else ""
        raise InputError(f"no offer for {g.id} in {where}{hint}")
    if show is None:
        own = {o.price_per_hour.currency for o in same_gpu}
        show = own.pop() if len(own) == 1 else (selection.main_currency() or "USD")
    offer = cheapest_offer(offers, g.id, show, rates, gpus=count, spot=spot)
    if offer is None:
        kind = "spot" if spot else "on-demand"
        other = "drop --spot" if spot else "add --spot"
        raise InputError(f"no {kind} offer for {g.id} in {where}; {other} to use the others")
    tc = task_cost(offer, span, gpus=count, work=amount, unit=unit, per=per_n)
    shown = tc.converted(show, rates) if show != offer.price_per_hour.currency else tc
    return CostResult(g, tc, shown, show, rates, prices, selection, res.note, rate_of_work)


def _work(work: str | None) -> float | None:
    if work is None:
        return None
    amount = parse_count(work, what="amount of work")
    if not 0 < amount <= MAX_WORK:
        raise InputError(f"--work must be more than 0 and at most {MAX_WORK:.0e}, got {work!r}")
    return amount


def _per(per: str | None, work: float | None) -> float:
    per_n = 1 if per is None else parse_count(per, what="'per'")
    if not 0 < per_n <= MAX_WORK:
        raise InputError(f"--per must be more than 0 and at most {MAX_WORK:.0e}, got {per!r}")
    if work is None and per_n != 1:
        raise InputError("--per sets the unit of a cost per unit of work: give --work too")
    return per_n


def _duration(duration: str | None, rate_of_work: str | None, work: float | None) -> Range:
    if rate_of_work is not None:
        if duration is not None:
            raise InputError("give --duration or --rate-of-work, not both")
        if work is None:
            raise InputError("--rate-of-work needs --work (how many units the run produces)")
        rate, per_s = parse_rate_of_work(rate_of_work)
        span = duration_for(work, rate, per_s=per_s)
    elif duration is None:
        raise InputError("give --duration (3h20m, 2h..4h) or --work with --rate-of-work")
    else:
        span = parse_duration_range(duration)
    if span.high <= 0:
        raise InputError("--duration must be longer than zero")
    if span.high > MAX_RUN_S:
        raise InputError(f"a run of more than 10 years is not a run; got {span.high / 86400:,.0f} "
                         "days")
    return span
