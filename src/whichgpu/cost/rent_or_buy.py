"""Rent or buy (S13 questions 3-5, S14): the advice, the numbers behind it, and the thresholds.

Nothing here is a hard-coded rule. Over a horizon of H months at h hours of use per month:

    rent = h x H x rent price
    own  = capital - resale + H x (h x running cost per used hour + maintenance / 12)

Buy when owning costs less. The thresholds the articles quote come out of the same equation:

- hours per month (or utilisation) needed for owning to pay back within the horizon;
- months needed to pay back at the given use (the break-even time);
- across several GPUs, the band of hours per month below which no GPU pays back and above
  which every GPU that can pay back does (S13 question 4's "< 100 h always rent, > 500 h
  consider owning").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from whichgpu.cost.currency import RateTable
from whichgpu.cost.ownership import HOURS_PER_MONTH, Ownership, OwnershipInputs, ownership
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Money


@dataclass(frozen=True)
class Thresholds:
    """Where the advice flips, for one GPU and one set of prices.

    ``hours_per_month`` / ``utilization``: the use owning needs to pay back within the horizon
    (``inf`` if renting is cheaper than the running costs alone). ``months``: how long owning
    needs to pay back at the given use (``inf`` if never).
    """

    horizon_months: float
    hours_per_month: float
    utilization: float
    months: float

    @property
    def reachable(self) -> bool:
        """Whether some use within a month's 730 hours pays back within the horizon."""
        return self.hours_per_month <= HOURS_PER_MONTH

    def to_json(self) -> dict[str, Any]:
        def f(x: float) -> float | None:
            return round(x, 4) if math.isfinite(x) else None

        return {"horizon_months": self.horizon_months, "hours_per_month": f(self.hours_per_month),
                "utilization": f(self.utilization), "months": f(self.months),
                "reachable": self.reachable}


def _require_rent(o: Ownership) -> Money:
    if o.rent_price is None:
        raise InputError(msg("rent.needs_price", "rent-or-buy needs a rental price: give {rent} "
                             "(e.g. 3.15USD) or an offer set with this GPU ({prices})",
                             rent=Field("rent_price"), prices=Field("prices")))
    return o.rent_price


def thresholds(o: Ownership) -> Thresholds:
    """The use and the time owning needs to pay back, for the inputs' horizon (``years``)."""
    rent = _require_rent(o)
    horizon = o.inputs.years * 12
    margin = (rent - o.running_cost_per_used_hour).amount  # saved per used hour by owning
    to_recover = ((o.capital_cost - o.resale_value).amount
                  + horizon * o.maintenance_per_year.amount / 12)
    hours = to_recover / (horizon * margin) if margin > 0 else math.inf
    months = o.break_even_months()
    return Thresholds(horizon, hours, hours / HOURS_PER_MONTH,
                      math.inf if months is None else months)


@dataclass(frozen=True)
class Advice:
    """Rent or buy, with the costs over the horizon and the reasons in words."""

    decision: Literal["rent", "buy"]
    ownership: Ownership
    rent_cost: Money
    own_cost: Money
    thresholds: Thresholds
    reasons: tuple[Message, ...]

    @property
    def saving(self) -> Money:
        """What the advised choice saves over the other, over the horizon."""
        return abs_money(self.rent_cost - self.own_cost)

    def to_json(self) -> dict[str, Any]:
        o = self.ownership
        return {
            "decision": self.decision,
            "gpu": o.inputs.gpu,
            "horizon_months": self.thresholds.horizon_months,
            "hours_per_month": round(o.hours_used_per_month, 4),
            "utilization": o.inputs.utilization,
            "rent_cost": self.rent_cost.to_json(2),
            "own_cost": self.own_cost.to_json(2),
            "saving": self.saving.to_json(2),
            "thresholds": self.thresholds.to_json(),
            "reasons": list(self.reasons),
            "messages": {"reasons": [m.to_json() for m in self.reasons]},
        }


def abs_money(m: Money) -> Money:
    return Money(abs(m.amount), m.currency)


def rent_or_buy(inputs: OwnershipInputs, rates: RateTable | None = None, *,
                hours_per_month: float | None = None,
                horizon_months: float | None = None) -> Advice:
    """Advise renting or buying ``inputs.gpu`` for ``hours_per_month`` over ``horizon_months``.

    Both default to the inputs (utilisation x 730 h, years x 12). The decision compares the
    cash of each choice over the horizon; the reasons quote the break-even and the thresholds.
    """
    updates: dict[str, Any] = {}
    if hours_per_month is not None:
        if not (math.isfinite(hours_per_month) and 0 < hours_per_month <= HOURS_PER_MONTH):
            raise InputError(msg("rent.hours", "hours per month must be more than 0 and at "
                                 "most {limit:.0f}, got {v:g}", limit=HOURS_PER_MONTH,
                                 v=hours_per_month))
        updates["utilization"] = hours_per_month / HOURS_PER_MONTH
    if horizon_months is not None:
        if not (math.isfinite(horizon_months) and 0 < horizon_months <= 360):
            raise InputError(msg("rent.horizon", "the horizon must be more than 0 and at most "
                                 "360 months, got {v:g}", v=horizon_months))
        updates["years"] = horizon_months / 12
    if updates:
        from whichgpu.cost.ownership import make_inputs

        inputs = make_inputs(**{**dict(inputs), **updates})
    o = ownership(inputs, rates)
    rent_price = _require_rent(o)
    t = thresholds(o)
    rent_cost = rent_price * o.hours_used
    own_cost = o.total_cost
    decision: Literal["rent", "buy"] = "buy" if own_cost.amount < rent_cost.amount else "rent"

    h, hz = o.hours_used_per_month, t.horizon_months
    reasons: list[Message] = [
        msg("advice.costs", "over {horizon:g} months at {hours:,.0f} h/month ({use:.0%}): "
            "renting costs {rent}, owning {own}", horizon=hz, hours=h,
            use=o.inputs.utilization, rent=rent_cost, own=own_cost),
    ]
    if math.isfinite(t.months):
        reasons.append(msg("advice.pays_back.within", "at this use owning pays back after "
                           "{months:.1f} months (within the {horizon:g}-month horizon)",
                           months=t.months, horizon=hz) if t.months <= hz else
                       msg("advice.pays_back.beyond", "at this use owning pays back after "
                           "{months:.1f} months (beyond the {horizon:g}-month horizon)",
                           months=t.months, horizon=hz))
    else:
        reasons.append(msg("advice.never", "at this use owning never pays back: the rent saved "
                           "per hour does not cover the running costs and maintenance"))
    if t.reachable:
        reasons.append(msg("advice.needs", "over {horizon:g} months owning needs at least "
                           "{hours:,.0f} h/month ({use:.0%} utilisation) to pay back",
                           horizon=hz, hours=t.hours_per_month, use=t.utilization))
    else:
        reasons.append(msg("advice.cannot", "over {horizon:g} months owning cannot pay back "
                           "even at 24/7 use", horizon=hz))
    running = o.running_cost_per_used_hour
    reasons.append(msg("advice.per_hour", "each hour of use costs {running} to run when owned "
                       "vs {rent} rented; owning also ties up {capital} and pays when idle",
                       running=running, rent=rent_price, capital=o.capital_cost))
    return Advice(decision, o, rent_cost, own_cost, t, tuple(reasons))


@dataclass(frozen=True)
class UsageBand:
    """S13 question 4 for a set of GPUs: hours per month needed to pay back over a horizon.

    Below ``low`` no GPU of the set pays back (always rent); above ``high`` every GPU that can
    pay back at all does (consider owning); in between it depends on the GPU and its price.
    ``never`` lists GPUs that cannot pay back within the horizon even at 24/7.
    """

    horizon_months: float
    per_gpu: dict[str, float]
    low: float
    high: float
    never: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"horizon_months": self.horizon_months, "low_hours_per_month": round(self.low, 3),
                "high_hours_per_month": round(self.high, 3),
                "per_gpu": {k: (round(v, 3) if math.isfinite(v) else None)
                            for k, v in self.per_gpu.items()},
                "never": list(self.never)}


def usage_band(inputs: Iterable[OwnershipInputs], horizon_months: float,
               rates: RateTable | None = None) -> UsageBand:
    """The hours-per-month band over ``horizon_months`` for several GPUs (:class:`UsageBand`)."""
    per_gpu: dict[str, float] = {}
    for i in inputs:
        advice = rent_or_buy(i, rates, horizon_months=horizon_months)
        per_gpu[i.gpu or f"gpu{len(per_gpu) + 1}"] = advice.thresholds.hours_per_month
    if not per_gpu:
        raise InputError("a usage band needs at least one GPU")
    payable = {k: v for k, v in per_gpu.items() if v <= HOURS_PER_MONTH}
    never = tuple(k for k in per_gpu if k not in payable)
    if not payable:
        return UsageBand(horizon_months, per_gpu, math.inf, math.inf, never)
    return UsageBand(horizon_months, per_gpu, min(payable.values()), max(payable.values()), never)
