"""What owning a GPU costs: every input explicit, every output traceable to them.

Total cost of ownership over ``years``::

    capital      = purchase price + host/server share per GPU
    electricity  = TDP x load factor x utilisation x 8,760 h x price per kWh    (S9, per year)
    cooling      = electricity x (PUE - 1) + cooling per hour of use x hours used  (per year)
    total        = capital - resale value + years x (electricity + cooling + maintenance)

    effective cost per hour owned = total / (years x 8,760 h)
    effective cost per hour used  = total / hours actually used  (idle 50 % doubles it, S11)

Break-even against a rental price (per GPU-hour): the owner pays the capital up front and a
running cost per hour of use (power, cooling) plus maintenance per month; the renter pays the
rent per hour of use. ``break_even_hours_capital_only`` is the article's capital / rent
(S11: 25,000 / 3.15 = 7,937 h); ``break_even_hours`` also counts the running costs. Resale is
left out of break-even (it is only known when the card is sold) and counted in the total.
All amounts are converted to one working currency with a dated rate table, never mixed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from whichgpu.catalog.gpus import GPU, Catalog, default_catalog, resolve_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.cost.currency import RateTable, convert, default_rates, known_currency
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Money, check_currency, format_money, parse_money

HOURS_PER_YEAR = 8760.0  # 365 x 24, as S9 computes
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730 h: S11's "24/7 ~ 11 months" is 7,937 / 730

_MONEY_FIELDS = ("purchase_price", "resale_value", "host_share", "kwh_price", "cooling_per_hour",
                 "maintenance_per_year", "rent_price")

# Upper bounds on money inputs, in US dollars at the shipped exchange rates (docs/ownership.md).
# They sit far above anything real, so that only typos and unit slips trip them ("25000000"
# for 25,000, a price per MWh given per kWh).
MONEY_CAPS_USD: dict[str, tuple[float, str]] = {
    "purchase_price": (1_000_000.0, "per GPU; the dearest catalog GPU costs about $50,000"),
    "resale_value": (1_000_000.0, "per GPU"),
    "host_share": (1_000_000.0, "per GPU"),
    "kwh_price": (5.0, "per kWh; the dearest household tariffs are under $1"),
    "cooling_per_hour": (100.0, "per hour of use; S11 counts $0.02"),
    "maintenance_per_year": (1_000_000.0, "per GPU and year"),
    "rent_price": (1_000.0, "per GPU-hour; on-demand prices are under $20"),
}
ANY_CURRENCY_CAP = 1e12  # for currencies the rate table cannot price

# Where each default comes from (shown with every result).
DEFAULT_SOURCES: dict[str, Message] = {
    "years": msg("source.years", "S9/S11: ownership over 3 years"),
    "utilization": msg("source.utilization", "S9: 60 % average utilisation"),
    "kwh_price": msg("source.kwh_price", "S9: {price:2}/kWh", price=Money(0.10, "USD")),
    "load_factor": msg("source.load_factor", "S9: annual cost = TDP x 8,760 h x utilisation x "
                       "price (full TDP while busy)"),
    "pue": msg("source.pue", "S9's formula has no facility overhead (PUE 1)"),
    "cooling_per_hour": msg("source.cooling", "none by default; S11 adds {price:2}/h for an H100",
                            price=Money(0.02, "USD")),
    "maintenance_per_year": msg("source.maintenance", "none by default; S11 names maintenance "
                                "without a figure"),
    "resale_value": msg("source.resale", "none by default; S11 counts no resale"),
    "host_share": msg("source.host_share", "none by default; S9/S11 count the GPU alone"),
}


# An owner working in euros pays European electricity, not S9's US $0.10/kWh converted: the EU
# average price for non-household consumers in the first half of 2025, 19.02 EUR per 100 kWh
# excluding VAT and recoverable taxes (Eurostat, dataset nrg_pc_205, released 2025-10-29;
# https://www.eubusiness.com/energy/germany-electricity-prices-highest-in-eu/ quoting it, and
# https://ec.europa.eu/eurostat/statistics-explained/index.php?title=Electricity_price_statistics,
# data extracted October 2025). Households paid 28.72 EUR per 100 kWh, taxes included (nrg_pc_204).
EU_KWH_PRICE = Money(0.1902, "EUR")
EU_KWH_SOURCE = msg("source.kwh_price.eu", "Eurostat: EU average for non-household consumers, "
                    "first half of 2025, {price:4}/kWh excluding VAT (households paid {home:4} "
                    "with taxes); give your own tariff with {flag}", price=EU_KWH_PRICE,
                    home=Money(0.2872, "EUR"), flag=Field("kwh_price"))


class OwnershipInputs(BaseModel):
    """Everything the ownership model uses. Money fields accept ``Money`` or ``'25000USD'``.

    Optional money (resale, host share, cooling, maintenance) defaults to nothing. ``currency``
    is the working currency of the result (default: the purchase price's).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    gpu: str | None = None
    purchase_price: Money
    resale_value: Money | None = None
    years: float = 3.0
    host_share: Money | None = None
    tdp_watts: float
    load_factor: float = 1.0
    utilization: float = 0.6
    kwh_price: Money = Money(0.10, "USD")
    pue: float = 1.0
    cooling_per_hour: Money | None = None
    maintenance_per_year: Money | None = None
    rent_price: Money | None = None
    currency: str | None = None
    sources: dict[str, Any] = {}  # field -> where its value comes from (a Message)

    @field_validator(*_MONEY_FIELDS, mode="before")
    @classmethod
    def _money(cls, value: Any) -> Any:
        if value is None or isinstance(value, Money):
            return value
        if isinstance(value, dict) and {"amount", "currency"} <= set(value):
            return Money(float(value["amount"]), known_currency(value["currency"]))
        money = parse_money(value)
        return Money(money.amount, known_currency(money.currency))

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, value: Any) -> Any:
        return None if value is None else known_currency(check_currency(value))

    @model_validator(mode="after")
    def _check(self) -> OwnershipInputs:
        problems: list[str] = []  # Messages and plain sentences

        def amount(name: str, *, positive: bool = False) -> None:
            m = getattr(self, name)
            if m is None:
                return
            if not math.isfinite(m.amount) or m.amount < 0 or (positive and m.amount == 0):
                words = name.replace("_", " ")
                problems.append(msg("ownership.positive", "{name} must be positive, got {v}",
                                    name=Field(name, flag=words), v=m) if positive else
                                msg("ownership.zero_or_more", "{name} must be zero or more, got "
                                    "{v}", name=Field(name, flag=words), v=m))
                return
            cap = _over_cap(name, m)
            if cap:
                problems.append(cap)

        amount("purchase_price", positive=True)
        amount("rent_price", positive=True)
        for name in ("resale_value", "host_share", "kwh_price", "cooling_per_hour",
                     "maintenance_per_year"):
            amount(name)
        limits = {
            "years": (0, 30, "years must be more than 0 and at most 30"),
            "tdp_watts": (0, 5000, "TDP must be more than 0 W and at most 5,000 W"),
            "load_factor": (0, 1, "load factor (share of TDP drawn while busy) must be more "
                                  "than 0 and at most 1"),
            "utilization": (0, 1, "utilisation must be more than 0 and at most 1 (100 %)"),
        }
        for name, (low, high, text) in limits.items():
            v = getattr(self, name)
            if not (math.isfinite(v) and low < v <= high):
                problems.append(f"{text}, got {v:g}")
        if not (math.isfinite(self.pue) and 1 <= self.pue <= 3):
            problems.append(f"PUE must be between 1 and 3, got {self.pue:g}")
        if problems:
            raise InputError(problems[0] if len(problems) == 1 else "; ".join(problems))
        return self

    @property
    def working_currency(self) -> str:
        return self.currency or self.purchase_price.currency

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"gpu": self.gpu}
        for name in type(self).model_fields:
            if name in ("gpu", "sources"):
                continue
            value = getattr(self, name)
            if value is None and name in _MONEY_FIELDS and name != "rent_price":
                value = Money(0.0, self.working_currency)  # optional costs default to nothing
            data[name] = value.to_json() if isinstance(value, Money) else value
        data["currency"] = self.working_currency
        data["hours_per_month"] = round(self.utilization * HOURS_PER_MONTH, 6)
        return data


def _over_cap(name: str, m: Money) -> str | None:
    """Why ``m`` is too large for input ``name`` (see :data:`MONEY_CAPS_USD`), or None."""
    cap, why = MONEY_CAPS_USD[name]
    label = name.replace("_", " ")
    shown = format_money(m) if abs(m.amount) < 1e9 else f"{m.amount:.3g} {m.currency}"
    try:
        usd = convert(m, "USD").amount
    except InputError:  # a currency the table cannot price: only the absolute bound applies
        return (f"{label} {shown} is not a plausible amount"
                if m.amount > ANY_CURRENCY_CAP else None)
    if usd <= cap:
        return None
    if m.currency != "USD" and usd < 1e9:
        shown += f" (about {format_money(Money(usd, 'USD'))})"
    return (f"{label} {shown} is above the {format_money(Money(cap, 'USD'))} bound ({why}); "
            "check the amount and its unit")


def _readable(exc: ValidationError) -> InputError:
    parts = []
    for err in exc.errors():
        msg = str(err.get("msg", "")).removeprefix("Value error, ")
        ctx_err = (err.get("ctx") or {}).get("error")
        said: Any = msg
        if isinstance(ctx_err, InputError):
            said = ctx_err.args[0] if ctx_err.args else str(ctx_err)
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {said}" if loc else said)
    return InputError(parts[0] if len(parts) == 1 else "; ".join(parts))


def make_inputs(**fields: Any) -> OwnershipInputs:
    """:class:`OwnershipInputs` from keyword fields; bad values raise :class:`InputError`."""
    try:
        return OwnershipInputs(**fields)
    except ValidationError as exc:
        raise _readable(exc) from None


def ownership_inputs(gpu: str | GPU | None = None, *, offers: Iterable[Offer] | None = None,
                     rates: RateTable | None = None, catalog: Catalog | None = None,
                     **overrides: Any) -> OwnershipInputs:
    """Inputs for ``gpu`` with defaults from the catalog (purchase-price midpoint, TDP), the
    cheapest on-demand offer in ``offers`` (rent price) and S9 (the rest); ``overrides`` win.

    Every value's origin is recorded in ``sources``.
    """
    overrides = {k: v for k, v in overrides.items() if v is not None}
    sources = dict(DEFAULT_SOURCES)
    fields: dict[str, Any] = {}
    g: GPU | None = None
    if gpu is not None:
        g = gpu if isinstance(gpu, GPU) else resolve_gpu(gpu, catalog or default_catalog()).gpu
        fields["gpu"] = g.id
        if g.tdp_watts > 0:  # a card the user described may not say its power
            fields["tdp_watts"] = g.tdp_watts
            sources["tdp_watts"] = msg("source.tdp", "catalog {gpu}: {watts:g} W ({source})",
                                       gpu=g.id, watts=g.tdp_watts, source=g.tdp_w.source)
            if "load_factor" not in overrides:  # measured board power, not the TDP (issue 33)
                from whichgpu.estimate.energy import busy_load_factor

                fields["load_factor"], cited = busy_load_factor(g)
                sources["load_factor"] = msg(
                    "source.load_factor.busy", "board power while busy serving (decode at "
                    "batch 128) = {share:.0%} of TDP ({cited})", share=fields["load_factor"],
                    cited=cited)
        p = g.purchase_price
        if p is not None:
            fields["purchase_price"] = Money(p.typical, p.currency)
            sources["purchase_price"] = msg(
                "source.purchase_price", "catalog {gpu}: midpoint of {low:,.0f}-{high:,.0f} "
                "{currency} ({source}, {date})", gpu=g.id, low=p.low, high=p.high,
                currency=p.currency, source=p.source, date=p.date)
    if "rent_price" not in overrides and offers is not None and g is not None:
        from whichgpu.cost.billing import cheapest_offer

        currency = overrides.get("currency") or (
            fields["purchase_price"].currency if "purchase_price" in fields else "USD")
        offer = cheapest_offer(offers, g.id, check_currency(currency), rates)
        if offer is not None:
            fields["rent_price"] = offer.price_per_gpu_hour
            sources["rent_price"] = msg(
                "source.rent_price", "offer set {set}: {provider}, {price}/h ({source})",
                set=offer.offer_set, provider=offer.provider, price=offer.price_per_gpu_hour,
                source=offer.source or msg("source.none", "no source"))
    working = overrides.get("currency") or (
        fields["purchase_price"].currency if "purchase_price" in fields else "USD")
    if "kwh_price" not in overrides and working == "EUR":
        fields["kwh_price"] = EU_KWH_PRICE  # not S9's US price converted
        sources["kwh_price"] = EU_KWH_SOURCE
    for name in overrides:
        sources[name] = msg("source.given", "given")
    fields.update(overrides)
    if "purchase_price" not in fields:
        example = Field("purchase_price", "25000USD")
        if g is None:
            raise InputError(msg("tco.no_price.no_gpu", "no GPU was named; give one, e.g. "
                                 "{example}", example=example))
        if g.no_public_price is not None:
            raise InputError(msg("tco.no_price.unpublished", "the catalog has no purchase price "
                                 "for {gpu} (no public price: 'whichgpu gpu {gpu}' says why); "
                                 "give one, e.g. {example}", gpu=g.id, example=example))
        raise InputError(msg("tco.no_price", "the catalog has no purchase price for {gpu}; "
                             "give one, e.g. {example}", gpu=g.id, example=example))
    if "tdp_watts" not in fields:
        raise InputError(msg("tco.no_tdp", "no TDP known; give one, e.g. {example}",
                             example=Field("tdp", 700)))
    fields["sources"] = {k: v for k, v in sources.items()}
    return make_inputs(**fields)


@dataclass(frozen=True)
class CurvePoint:
    """Cumulative cash spent by month ``month``, renting vs owning (for a chart)."""

    month: float
    hours_used: float
    rent: Money | None
    own: Money

    def to_json(self) -> dict[str, Any]:
        return {"month": self.month, "hours_used": round(self.hours_used, 3),
                "rent": self.rent.to_json(2) if self.rent else None,
                "own": self.own.to_json(2)}


def _none_if_inf(x: float | None, digits: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)


@dataclass(frozen=True)
class Ownership:
    """The ownership model evaluated for one set of inputs, all in one currency."""

    inputs: OwnershipInputs
    rates: RateTable
    currency: str
    purchase_price: Money
    resale_value: Money
    host_share: Money
    kwh_price: Money
    cooling_per_hour: Money
    maintenance_per_year: Money
    rent_price: Money | None

    # ------------------------------------------------------------ hours and energy
    @property
    def hours_owned(self) -> float:
        return self.inputs.years * HOURS_PER_YEAR

    @property
    def hours_used(self) -> float:
        return self.hours_owned * self.inputs.utilization

    @property
    def hours_used_per_month(self) -> float:
        return HOURS_PER_MONTH * self.inputs.utilization

    @property
    def power_kw(self) -> float:
        """What the GPU draws while busy: TDP x load factor."""
        return self.inputs.tdp_watts * self.inputs.load_factor / 1000

    @property
    def energy_kwh_per_year(self) -> float:
        return self.power_kw * self.inputs.utilization * HOURS_PER_YEAR

    # ------------------------------------------------------------ money per year
    @property
    def electricity_per_year(self) -> Money:
        """The GPU's own electricity (S9's column): no facility overhead."""
        return self.kwh_price * self.energy_kwh_per_year

    @property
    def cooling_per_year(self) -> Money:
        pue_part = self.electricity_per_year * (self.inputs.pue - 1)
        return pue_part + self.cooling_per_hour * (self.inputs.utilization * HOURS_PER_YEAR)

    @property
    def running_cost_per_year(self) -> Money:
        return self.electricity_per_year + self.cooling_per_year + self.maintenance_per_year

    @property
    def running_cost_per_used_hour(self) -> Money:
        """Power (with PUE) and cooling per hour of work: what owning adds to each used hour."""
        power = self.kwh_price * (self.power_kw * self.inputs.pue)
        return power + self.cooling_per_hour

    # ------------------------------------------------------------ totals
    @property
    def capital_cost(self) -> Money:
        """Paid up front: purchase price + host share (before any resale)."""
        return self.purchase_price + self.host_share

    @property
    def total_cost(self) -> Money:
        """Cost of owning for ``years``: capital - resale + running costs."""
        return (self.capital_cost - self.resale_value
                + self.running_cost_per_year * self.inputs.years)

    @property
    def effective_cost_per_hour(self) -> Money:
        """Total cost per hour owned (S9's last column, S11's ~$1.05/h)."""
        return self.total_cost / self.hours_owned

    @property
    def effective_cost_per_used_hour(self) -> Money:
        """Total cost per hour of actual use; what to compare with a rental price."""
        return self.total_cost / self.hours_used

    # ------------------------------------------------------------ break-even
    @property
    def break_even_hours_capital_only(self) -> float | None:
        """S11's formula: hours of rent that cost as much as the capital (running costs ignored)."""
        if self.rent_price is None:
            return None
        return self.capital_cost.amount / self.rent_price.amount

    def break_even_months(self, utilization: float | None = None) -> float | None:
        """Months until renting would have cost as much as owning, at ``utilization``.

        ``inf`` when owning never catches up (rent below the running costs); ``None`` without a
        rental price.
        """
        if self.rent_price is None:
            return None
        u = self.inputs.utilization if utilization is None else utilization
        if not 0 < u <= 1:
            raise InputError(msg("tco.utilisation", "utilisation must be more than 0 and at most "
                                 "1, got {v:g}", v=u))
        margin = HOURS_PER_MONTH * u * (self.rent_price - self.running_cost_per_used_hour).amount
        margin -= self.maintenance_per_year.amount / 12
        return self.capital_cost.amount / margin if margin > 0 else math.inf

    @property
    def break_even_hours(self) -> float | None:
        """Hours of use until owning has cost as much as renting (running costs counted)."""
        months = self.break_even_months()
        return None if months is None else months * self.hours_used_per_month

    @property
    def break_even_months_24x7(self) -> float | None:
        return self.break_even_months(1.0)

    def implied_purchase_price(self, effective_cost_per_hour: Money) -> Money:
        """The purchase price at which the effective cost per hour owned would be the target."""
        target = convert(effective_cost_per_hour, self.currency, self.rates)
        others = self.total_cost - self.purchase_price
        return target * self.hours_owned - others

    # ------------------------------------------------------------ chart data
    def curve(self, months: int | None = None) -> list[CurvePoint]:
        """Cumulative cash, renting vs owning, month by month up to ``months`` (default: years).

        Owning starts at the capital cost; resale is not in the curve (see ``total_cost``).
        """
        months = math.ceil(self.inputs.years * 12) if months is None else months
        if months < 1 or months > 600:
            raise InputError(f"a cost curve spans 1 to 600 months, got {months}")
        per_month_own = (self.running_cost_per_used_hour * self.hours_used_per_month
                         + self.maintenance_per_year / 12)
        points = []
        for m in range(months + 1):
            hours = m * self.hours_used_per_month
            rent = self.rent_price * hours if self.rent_price else None
            points.append(CurvePoint(m, hours, rent, self.capital_cost + per_month_own * m))
        return points

    # ------------------------------------------------------------ reporting
    def assumptions(self) -> list[Message]:
        i = self.inputs
        notes = [
            msg("ownership.hours", "{years:g} years owned = {owned:,.0f} h; utilisation "
                "{use:.0%} = {used:,.0f} h of use ({per_month:,.0f} h/month)", years=i.years,
                owned=self.hours_owned, use=i.utilization, used=self.hours_used,
                per_month=self.hours_used_per_month),
            msg("ownership.power", "power {watts:g} W TDP x load factor {load:g} at {kwh}/kWh, "
                "PUE {pue:g}", watts=i.tdp_watts, load=i.load_factor, kwh=self.kwh_price,
                pue=i.pue),
            msg("ownership.month", "a month is 730 h (8,760 / 12); break-even counts the capital "
                "in full (no resale)"),
        ]
        if self.currency != i.purchase_price.currency or any(
                getattr(i, f) is not None and getattr(i, f).currency != self.currency
                for f in _MONEY_FIELDS):
            used = sorted({getattr(i, f).currency for f in _MONEY_FIELDS
                           if getattr(i, f) is not None} - {self.currency})
            notes += [msg("ownership.converted", "converted: {pair}",
                          pair=self.rates.describe_pair(c, self.currency)) for c in used]
        return notes

    def to_json(self, curve: bool = True) -> dict[str, Any]:
        def m(x: Money | None) -> dict[str, Any] | None:
            return None if x is None else x.to_json()

        data: dict[str, Any] = {
            "gpu": self.inputs.gpu,
            "currency": self.currency,
            "inputs": self.inputs.to_json(),
            "hours_owned": self.hours_owned,
            "hours_used": self.hours_used,
            "hours_used_per_month": self.hours_used_per_month,
            "energy_kwh_per_year": round(self.energy_kwh_per_year, 3),
            "capital_cost": m(self.capital_cost),
            "electricity_per_year": m(self.electricity_per_year),
            "cooling_per_year": m(self.cooling_per_year),
            "maintenance_per_year": m(self.maintenance_per_year),
            "running_cost_per_year": m(self.running_cost_per_year),
            "running_cost_per_used_hour": m(self.running_cost_per_used_hour),
            "resale_value": m(self.resale_value),
            "total_cost": m(self.total_cost),
            "effective_cost_per_hour": m(self.effective_cost_per_hour),
            "effective_cost_per_used_hour": m(self.effective_cost_per_used_hour),
            "rent_price": m(self.rent_price),
            "break_even_hours": _none_if_inf(self.break_even_hours),
            "break_even_hours_capital_only": _none_if_inf(self.break_even_hours_capital_only),
            "break_even_months_24x7": _none_if_inf(self.break_even_months_24x7),
            "break_even_months": _none_if_inf(self.break_even_months()),
            "assumptions": self.assumptions(),
            "sources": dict(self.inputs.sources),
            "rates": self.rates.to_json(),
        }
        if curve:
            data["curve"] = [p.to_json() for p in self.curve()]
        return data


def ownership(inputs: OwnershipInputs, rates: RateTable | None = None) -> Ownership:
    """Evaluate the ownership model: every amount converted to the working currency first."""
    rates = rates or default_rates()
    cur = inputs.working_currency

    def to(m: Money | None) -> Money:
        if m is None or m.amount == 0:
            return Money(0.0, cur)
        return convert(m, cur, rates)

    result = Ownership(
        inputs=inputs, rates=rates, currency=cur,
        purchase_price=to(inputs.purchase_price), resale_value=to(inputs.resale_value),
        host_share=to(inputs.host_share), kwh_price=to(inputs.kwh_price),
        cooling_per_hour=to(inputs.cooling_per_hour),
        maintenance_per_year=to(inputs.maintenance_per_year),
        rent_price=to(inputs.rent_price) if inputs.rent_price is not None else None)
    if result.resale_value.amount > result.capital_cost.amount:
        raise InputError(msg("tco.resale", "resale value {resale} is more than was paid "
                             "({paid})", resale=result.resale_value, paid=result.capital_cost))
    return result
