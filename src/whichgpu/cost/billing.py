"""What a run costs on an offer: billing rule, instances for N GPUs, spot kept apart.

An offer's price is for the whole offer (``gpu_count`` GPUs), billed under its
:class:`~whichgpu.catalog.offers.BillingRule` (S20: per minute after a 15-minute minimum).
A job that needs N GPUs rents ``ceil(N / gpu_count)`` instances and pays for all their GPUs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from whichgpu.catalog.offers import Offer
from whichgpu.cost.currency import RateTable, convert, default_rates
from whichgpu.errors import InputError
from whichgpu.units import Money, Range, check_currency, format_duration, format_money


@dataclass(frozen=True)
class MoneyRange:
    """A low / typical / high amount in one currency."""

    low: Money
    typical: Money
    high: Money

    def __post_init__(self) -> None:
        if len({self.low.currency, self.typical.currency, self.high.currency}) != 1:
            raise InputError("a money range must be in one currency")
        Range(self.low.amount, self.typical.amount, self.high.amount)  # checks the order

    @property
    def currency(self) -> str:
        return self.typical.currency

    @classmethod
    def of(cls, amounts: Range, currency: str) -> MoneyRange:
        return cls(Money(amounts.low, currency), Money(amounts.typical, currency),
                   Money(amounts.high, currency))

    def scale(self, factor: float) -> MoneyRange:
        return MoneyRange(self.low * factor, self.typical * factor, self.high * factor)

    def plus(self, other: MoneyRange) -> MoneyRange:
        """The sum, end by end (one currency: convert first)."""
        if other.currency != self.currency:
            raise InputError("money ranges in different currencies: convert first")
        return MoneyRange(*(Money(getattr(self, k).amount + getattr(other, k).amount,
                                  self.currency) for k in ("low", "typical", "high")))

    def convert(self, currency: str, rates: RateTable | None = None) -> MoneyRange:
        return MoneyRange(*(convert(m, currency, rates) for m in (self.low, self.typical,
                                                                  self.high)))

    def to_json(self, digits: int = 6) -> dict[str, dict[str, object]]:
        return {k: getattr(self, k).to_json(digits) for k in ("low", "typical", "high")}

    def __str__(self) -> str:
        if self.low.amount == self.high.amount:
            return format_money(self.typical)
        return (f"{format_money(self.typical)} ({format_money(self.low)} to "
                f"{format_money(self.high)})")


def instances_needed(offer: Offer, gpus: int) -> int:
    """How many instances of ``offer`` a job of ``gpus`` GPUs rents (``ceil(gpus / count)``)."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise InputError(f"a job needs a whole, positive number of GPUs, got {gpus!r}")
    return math.ceil(gpus / offer.gpu_count)


def _check_duration(seconds: float) -> float:
    seconds = float(seconds)
    if math.isnan(seconds) or seconds < 0:
        raise InputError(f"a run cannot last {seconds} s")
    if math.isinf(seconds):
        raise InputError("a run must have a finite duration")
    return seconds


@dataclass(frozen=True)
class RunCost:
    """The cost of one run of ``duration_s`` on ``instances`` instances of ``offer``."""

    offer: Offer
    gpus: int
    instances: int
    duration_s: float
    billed_s: float
    cost: Money

    @property
    def spot(self) -> bool:
        return self.offer.spot

    @property
    def gpus_paid(self) -> int:
        return self.instances * self.offer.gpu_count

    def assumptions(self) -> list[str]:
        o = self.offer
        notes = [f"{o.provider}: {format_money(o.price_per_hour)}/h for {o.gpu_count} x {o.gpu}"
                 f", billed {o.billing.describe()}"
                 + (" (spot: can be interrupted)" if o.spot else " (on-demand)")]
        if self.billed_s > self.duration_s:
            notes.append(f"a {format_duration(self.duration_s)} run is billed "
                         f"{format_duration(self.billed_s)}")
        if self.gpus_paid > self.gpus:
            notes.append(f"{self.gpus} GPU(s) needed, {self.gpus_paid} paid for "
                         f"({self.instances} instance(s) of {o.gpu_count})")
        return notes

    def to_json(self) -> dict[str, object]:
        return {
            "gpu": self.offer.gpu, "gpus": self.gpus, "instances": self.instances,
            "gpus_paid": self.gpus_paid, "duration_s": self.duration_s,
            "billed_s": self.billed_s, "cost": self.cost.to_json(),
            "pricing": "spot" if self.spot else "on-demand",
            "offer": self.offer.to_json(), "assumptions": self.assumptions(),
            "source": self.offer.source,
        }


def run_cost(offer: Offer, duration_s: float, *, gpus: int | None = None) -> RunCost:
    """The cost of one run of ``duration_s`` seconds needing ``gpus`` GPUs (default: the offer's).

    S4: ``run_cost(rtx_4090_at_0_60, 10 * 3600).cost`` is $6.00.
    """
    duration_s = _check_duration(duration_s)
    gpus = offer.gpu_count if gpus is None else gpus
    instances = instances_needed(offer, gpus)
    billed = offer.billing.billed_seconds(duration_s)
    return RunCost(offer, gpus, instances, duration_s, billed,
                   _billed_cost(offer, instances, billed))


def _billed_cost(offer: Offer, instances: int, billed_s: float) -> Money:
    return offer.price_per_hour * (instances * billed_s / 3600)


def run_cost_amount(offer: Offer, duration_s: float) -> Money:
    """``run_cost(offer, duration_s).cost`` alone (the offer's own GPUs), without the record:
    for ranking many offers by a duration already checked finite and non-negative."""
    return _billed_cost(offer, 1, offer.billing.billed_seconds(float(duration_s)))


def run_cost_range(offer: Offer, duration_s: Range, *, gpus: int | None = None) -> MoneyRange:
    """Low / typical / high cost for a duration given as a range (billing applied to each):
    each end is ``run_cost(offer, end, gpus=gpus).cost`` (the same checks in the same order,
    the same operations), without the records (a recommendation prices thousands)."""
    costs = []
    instances = 0
    for d in (duration_s.low, duration_s.typical, duration_s.high):
        d = _check_duration(d)
        if not instances:
            instances = instances_needed(offer, offer.gpu_count if gpus is None else gpus)
        costs.append(_billed_cost(offer, instances, offer.billing.billed_seconds(d)))
    return MoneyRange(*costs)


def run_cost_typical(offer: Offer, duration_s: float, currency: str, rates: RateTable | None,
                     machines: int = 1) -> float:
    """``(convert(run_cost_amount(offer, duration_s), currency, rates) * machines).amount``
    by the same float operations, without the Money records: for comparing many offers by
    the typical cost of a duration already checked finite and non-negative. ``currency``
    is an ISO code as written (``check_currency``'d)."""
    price = offer.price_per_hour
    amount = price.amount * float(1 * offer.billing.billed_seconds(float(duration_s)) / 3600)
    if price.currency != currency:
        amount = amount * (rates or default_rates()).rate(price.currency, currency)
    return amount * float(machines)


def run_cost_range_in(offer: Offer, duration_s: Range, currency: str,
                      rates: RateTable | None, machines: int = 1) -> tuple[float, float, float]:
    """The low, typical and high amounts of
    ``run_cost_range(offer, duration_s).convert(currency, rates).scale(machines)`` by the
    same checks and float operations, without the intermediate records (a recommendation
    works out hundreds). ``currency`` is an ISO code as written (``check_currency``'d)."""
    price = offer.price_per_hour
    billed = [offer.billing.billed_seconds(_check_duration(d))
              for d in (duration_s.low, duration_s.typical, duration_s.high)]
    amounts = [price.amount * float(1 * b / 3600) for b in billed]
    if price.currency != currency:
        rate = (rates or default_rates()).rate(price.currency, currency)
        amounts = [a * rate for a in amounts]
    factor = float(machines)
    return amounts[0] * factor, amounts[1] * factor, amounts[2] * factor


def hourly_price(offer: Offer, gpus: int, currency: str | None = None,
                 rates: RateTable | None = None) -> Money:
    """What ``gpus`` GPUs cost per hour on ``offer`` (whole instances), optionally converted."""
    price = offer.price_per_hour * instances_needed(offer, gpus)
    return convert(price, currency, rates) if currency else price


def cheapest_offer(offers: Iterable[Offer], gpu_id: str, currency: str,
                   rates: RateTable | None = None, *, gpus: int = 1,
                   spot: bool = False) -> Offer | None:
    """The offer that rents ``gpus`` GPUs of ``gpu_id`` for least, compared in ``currency``.

    Prices in other currencies are converted first (so EUR and USD offers compete fairly), and
    whole instances are counted (an 8-GPU offer bills 8 GPUs to a 2-GPU job). On-demand and spot
    are never mixed: ``spot=True`` looks only at spot offers, the default only at on-demand.
    """
    currency = check_currency(currency)
    pool = [o for o in offers if o.gpu == gpu_id and o.spot == spot]
    return min(pool, key=lambda o: hourly_price(o, gpus, currency, rates).amount, default=None)
