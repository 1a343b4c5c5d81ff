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
from whichgpu.messages import Field, Join, msg
from whichgpu.units import Money, Range, parse_count, parse_duration, parse_money

if TYPE_CHECKING:
    from whichgpu.answers.inputs.values import OptionMoney
    from whichgpu.catalog.prices import OfferSelection

#: No price source pinned: the latest prices of every source in the store (``current_offers``).
DEFAULT_PRICES = None
#: ``selection_for(prices, gpu_ids)``: the offers of those GPUs in a price source.
SelectionFor = Callable[[str | None, list[str]], "OfferSelection"]

# Bounds on a run (docs/ownership.md): far above any real job, so only slips trip them.
MAX_GPUS = 1_000_000  # the largest clusters reported hold a few hundred thousand GPUs
MAX_RUN_S = 10 * 365 * 86400.0  # ten years
MAX_WORK = 1e18  # units of work in one run (tokens, images ...)


UTILISATION = msg("what.utilisation", "utilisation")


def parse_fraction(text: str | None, what: str) -> float | None:
    """``0.6`` or ``60%`` -> 0.6; anything else is a clear error."""
    if text is None:
        return None
    s = str(text).strip().replace(",", ".")
    try:
        value = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise InputError(msg("fraction.unreadable", "cannot read {v!r} as {what}; write 0.6 or "
                             "60%", v=text, what=what)) from None
    if not s.endswith("%") and value > 1:
        raise InputError(msg("fraction.above_1", "{what} {v!r} is more than 1 (100 %); write a "
                             "fraction such as 0.6 or a percentage such as 60%", what=what,
                             v=text))
    return value


def parse_flag_money(text: str | None, flag: str | Field,
                     currency: str | None = None) -> Money | None:
    """Money for an option, with the option's name in the error. With a currency chosen, a bare
    number (``5000``) is in that currency; without one it needs its currency."""
    if text is None:
        return None
    try:
        money = parse_money(text, default_currency=currency)
        return Money(money.amount, known_currency(money.currency))
    except InputError as exc:
        raise InputError(msg("flag.reason", "{flag}: {reason}", flag=flag,
                             reason=exc.args[0] if exc.args else str(exc))) from None


def parse_duration_range(text: str) -> Range:
    """``3h20m`` (a point), ``2h..4h`` (typical = midpoint) or ``2h..3h..4h``."""
    parts = [parse_duration(p) for p in str(text).split("..")]
    if len(parts) == 1:
        return Range.point(parts[0])
    if len(parts) == 2:
        low, high = parts
        if low > high:
            raise InputError(msg("duration.range", "duration range {v!r} must go from low to "
                                 "high", v=text))
        return Range(low, (low + high) / 2, high)
    if len(parts) == 3 and parts[0] <= parts[1] <= parts[2]:
        return Range(*parts)
    raise InputError(msg("duration_range.unreadable", "cannot read {v!r} as a duration range; "
                         "write 3h20m, 2h..4h or 2h..3h..4h (low..typical..high)", v=str(text)))


_RATE_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
               "h": 3600.0, "hour": 3600.0, "d": 86400.0, "day": 86400.0}


def parse_rate_of_work(text: str) -> tuple[Range, float]:
    """``4/min``, ``4..6/min`` or ``300..500..700/s`` -> (units per period as a range, the
    period in seconds). S25: 4-6 images a minute is ``4..6/min``."""
    m = re.fullmatch(r"\s*([0-9.,e+\-]+(?:\.\.[0-9.,e+\-]+){0,2})\s*/\s*([a-z]+?)s?\s*",
                     str(text).lower())
    if not m or m.group(2) not in _RATE_UNITS:
        raise InputError(msg("work_rate.unreadable", "cannot read {v!r} as a rate of work; "
                             "write it like 4/min, 4..6/min or 300..700/s (units per s, min, h "
                             "or d)", v=str(text)))
    try:
        parts = [float(p.replace(",", ".")) for p in m.group(1).split("..")]
    except ValueError:
        raise InputError(msg("work_rate.number", "cannot read {v!r} as a rate of work; write "
                             "it like 4..6/min", v=str(text))) from None
    if any(not math.isfinite(p) or p <= 0 for p in parts):
        raise InputError(msg("work_rate.positive", "a rate of work must be positive, got {v!r}",
                             v=str(text)))
    if parts != sorted(parts):
        raise InputError(msg("work_rate.order", "rate of work {v!r} must go from low to high",
                             v=str(text)))
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


def tco(gpu_id: str | None, *, purchase_price: str | OptionMoney | None = None,
        resale_value: str | OptionMoney | None = None,
        years: float | None = None, host_share: str | OptionMoney | None = None,
        tdp: float | None = None, load_factor: float | None = None,
        utilization: str | float | None = None, hours_per_month: float | None = None,
        kwh_price: str | OptionMoney | None = None, pue: float | None = None,
        cooling_per_hour: str | OptionMoney | None = None,
        maintenance_per_year: str | OptionMoney | None = None,
        rent_price: str | OptionMoney | None = None,
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
        raise InputError(msg("flags.not_both", "give {a} or {b}, not both", a=Field("utilization"),
                             b=Field("hours_per_month")))
    if hours_per_month is not None and not (0 < hours_per_month <= 730):
        raise InputError(msg("tco.hours", "{field} must be more than 0 and at most 730 (24/7), "
                             "got {v:g}", field=Field("hours_per_month"), v=hours_per_month))
    # a Python caller's text is read here, a request's as it validated (values.py Utilisation)
    util = (hours_per_month / 730 if hours_per_month is not None
            else parse_fraction(utilization, UTILISATION) if isinstance(utilization, str)
            else None if utilization is None else float(utilization))
    rates: RateTable = rates_from(rate or [])
    from whichgpu.catalog.user_gpu import resolve_gpu_arg

    res = resolve_gpu_arg(gpu_id, gpu_spec)
    if res is None:
        raise InputError(msg("tco.needs_gpu", "tco needs a GPU: a catalog id (tco h100) or "
                             "{spec}", spec=Field("gpu_spec", "memory=...,tdp=...,price=...")))
    if res.gpu.user_spec and tdp is None and not res.gpu.tdp_watts:
        raise InputError(msg("tco.needs_tdp", "{gpu}: owning it costs electricity: give {tdp} "
                             "(or {spec})", gpu=res.gpu.id, tdp=Field("tdp", "W"),
                             spec=Field("gpu_spec", "tdp=W")))
    read = selection_for or _reader(max_age)
    if purchase_price is None:
        res = _buyable_variants(res)
    gpu, note = res.gpu, res.note
    selection = None
    if rent_price is None and len(res.candidates) > 1:  # a family: its cheapest variant to rent
        selection = read(prices, list(res.candidates))
        gpu, note = cheapest_variant(res, list(selection.offers), currency or "USD", rates)
    elif rent_price is None:
        selection = read(prices, [gpu.id])
    offers = list(selection.offers) if selection is not None else None
    cur = known_currency(currency, rates) if currency else None

    def money(value: str | OptionMoney | None, name: str) -> Money | None:
        if value is None or isinstance(value, str):  # a Python caller's text
            return parse_flag_money(value, Field(name), cur)
        return value.money(name, cur)  # a request's, read as it validated

    inputs = ownership_inputs(
        gpu, offers=offers, rates=rates,
        purchase_price=money(purchase_price, "purchase_price"),
        resale_value=money(resale_value, "resale_value"), years=years,
        host_share=money(host_share, "host_share"), tdp_watts=tdp,
        load_factor=load_factor, utilization=util,
        kwh_price=money(kwh_price, "kwh_price"), pue=pue,
        cooling_per_hour=money(cooling_per_hour, "cooling_per_hour"),
        maintenance_per_year=money(maintenance_per_year, "maintenance_per_year"),
        rent_price=money(rent_price, "rent_price"), currency=cur)
    o = ownership(inputs, rates)
    advice = rent_or_buy(inputs, rates) if o.rent_price is not None else None
    return TcoResult(gpu, o, advice, prices if rent_price is None else None, note, selection)


def _reader(max_age: float | None) -> SelectionFor:
    """Reads the GPUs' offers, the cheapest of each kind (all a run or a rent price can use)."""
    from whichgpu.catalog.prices import current_offers

    return lambda prices, gpus: current_offers(prices, max_age_days=max_age, gpus=gpus,
                                               cheapest_only=True)


def _check_max_age(max_age: float | None) -> None:
    if max_age is not None and not (math.isfinite(max_age) and max_age > 0):
        raise InputError(msg("prices.max_age", "{field} must be a positive number of days, got "
                             "{v:g}", field=Field("max_age"), v=max_age))


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
    spread: str = "one machine"  # advise.machines.Spread: one machine, cluster, separate
    sized_as_asked: bool = False  # the offer gives a price per GPU: its machine assumed
    vs_api: Any = None  # cost/vs_api.VsApiRate (cost --vs-api MODEL)

    @property
    def machines(self) -> int:
        return self.task.instances

    def shape(self) -> str:
        """'one 8-GPU machine (p5.48xlarge)' or '8 separate machines of 1 GPU'."""
        o = self.task.offer
        kind = f" ({o.instance_type})" if o.instance_type else ""
        if self.spread == "one machine":
            return f"one {o.gpu_count}-GPU machine{kind}"
        if self.spread == "cluster":
            return (f"{self.machines} machines of {o.gpu_count} GPUs{kind} linked by a cluster "
                    "network")
        return f"{self.machines} separate machines of {o.gpu_count} GPU(s){kind}"

    @property
    def converted(self) -> bool:
        return self.currency != self.task.offer.price_per_hour.currency

    def conversion_note(self) -> str | None:
        if not self.converted:
            return None
        return "converted: " + self.rates.describe_pair(self.task.offer.price_per_hour.currency,
                                                        self.currency)

    def assumptions(self) -> list[str]:
        o = self.task.offer
        if self.spread == "one machine":
            shape = (f"{self.task.gpus} GPU(s) in {self.shape()} of {o.provider}: linked by "
                     f"its own links, as GPUs that work together need")
        elif self.spread == "cluster":
            shape = (f"{self.shape()} of {o.provider}: the price list does not say such a "
                     "cluster can be rented; large clusters are usually reserved in advance, "
                     "at other prices")
        else:
            shape = (f"{self.shape()} of {o.provider}: no machine in the price list holds "
                     f"{self.task.gpus} {o.gpu}, so only work that splits into independent "
                     "parts runs like this (GPUs that work together need one machine)")
        notes = [shape] if self.task.gpus > 1 or self.machines > 1 else []
        from whichgpu.cost.capacity import ceiling

        c = ceiling(o.provider)
        paid = self.machines * o.gpu_count
        if paid > c.gpus:
            notes.append(f"{paid:,} GPUs from {o.provider}: more than the {c.gpus:,} GPUs of one "
                         f"kind one provider is assumed to rent on demand ({c.source}); spread "
                         "them over providers or reserve the capacity in advance")
        if self.sized_as_asked:
            notes.append(f"{o.provider} gives a price per GPU, not the machines it sells: "
                         f"assumed {o.gpu_count}-GPU machines at {o.gpu_count} x that price")
        notes += self.task.assumptions()
        if self.rate_of_work:
            notes.append(f"duration from the rate of work {self.rate_of_work}")
        note = self.conversion_note()  # None unless converted
        if note is not None:
            notes.append(note)
        return notes

    def to_json(self) -> dict[str, Any]:
        data = self.shown.to_json()
        data["machines"] = self.machines
        data["gpus_per_machine"] = self.task.offer.gpu_count
        paid = self.machines * self.task.offer.gpu_count
        data["gpus_paid"] = paid
        data["spread"] = self.spread
        data["shape"] = self.shape()
        from whichgpu.cost.capacity import ceiling

        c = ceiling(self.task.offer.provider)
        data["capacity"] = {"gpus_needed": paid, "ceiling": c.to_json(),
                            "exceeds": paid > c.gpus}
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
        if self.vs_api is not None:
            data["vs_api"] = self.vs_api.to_json()
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

    _check_max_age(max_age)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_GPUS:
        raise InputError(msg("cost.count", "{field} must be a whole number from 1 to {limit:,}, "
                             "got {v!r}", field=Field("count"), limit=MAX_GPUS, v=str(count)))
    amount = _work(work)
    per_n = _per(per, amount)
    span = _duration(duration, rate_of_work, amount)
    rates = rates_from(rate or [])
    show = known_currency(currency, rates) if currency else None
    from whichgpu.catalog.user_gpu import is_memory_only

    if is_memory_only(gpu_id):
        raise InputError(msg("cost.own_card", "cost prices a rented GPU, and {v!r} describes "
                             "your own card: it has no rental offers; 'whichgpu tco --gpu-spec "
                             "memory=...,tdp=...,price=...' gives what owning it costs per hour",
                             v=str(gpu_id)))
    res = resolve_gpu(gpu_id)
    g = res.gpu
    read = selection_for or _reader(max_age)
    note = res.note
    if len(res.candidates) > 1:  # a family name: its cheapest variant in these prices
        selection = read(prices, list(res.candidates))
        g, note = cheapest_variant(res, list(selection.offers), currency or "USD", rates,
                                   count, spot)
    else:
        selection = read(prices, [g.id])
    offers = list(selection.offers)
    same_gpu = [o for o in offers if o.gpu == g.id]
    where = prices or msg("cost.current_prices", "the current prices")
    if not same_gpu:
        elsewhere = [s for s in shipped_offer_sets() if s != prices
                     and read(s, [g.id]).offers] if prices else []
        if elsewhere:
            raise InputError(msg("cost.no_offer.elsewhere", "no offer for {gpu} in {where}; "
                                 "offer sets with it: {sets}", gpu=g.id, where=where,
                                 sets=", ".join(elsewhere)))
        raise InputError(msg("cost.no_offer", "no offer for {gpu} in {where}", gpu=g.id,
                             where=where))
    if show is None:
        own = {o.price_per_hour.currency for o in same_gpu}
        show = own.pop() if len(own) == 1 else (selection.main_currency() or "USD")
    offer, spread, sized = _machine_offer(offers, g.id, show, rates, count, spot)
    if offer is None:
        if spot:
            raise InputError(msg("cost.no_spot", "no spot offer for {gpu} in {where}; drop "
                                 "{flag} to use the others", gpu=g.id, where=where,
                                 flag=Field("spot")))
        raise InputError(msg("cost.no_on_demand", "no on-demand offer for {gpu} in {where}; add "
                             "{flag} to use the others", gpu=g.id, where=where,
                             flag=Field("spot")))
    tc = task_cost(offer, span, gpus=count, work=amount, unit=unit, per=per_n)
    shown = tc.converted(show, rates) if show != offer.price_per_hour.currency else tc
    return CostResult(g, tc, shown, show, rates, prices, selection, note, rate_of_work,
                      str(spread), sized)


def _buyable_variants(res: Any) -> Any:
    """A family name ('rtx-pro-6000') asked whether to rent or buy, with no purchase price
    given: only its variants with a catalog purchase price are candidates for the cheapest to
    rent (a server edition sold only inside servers has none: the answer would end in "no
    purchase price"). Every family's default variant has one (a test), so the default and its
    note stand; the family as it is where its default has none."""
    if len(res.candidates) < 2 or res.gpu.purchase_price is None:
        return res
    from whichgpu.catalog.gpus import default_catalog

    catalog = default_catalog()
    priced = tuple(c for c in res.candidates if catalog.get(c).purchase_price is not None)
    return res.model_copy(update={"candidates": priced})


def cheapest_variant(res: Any, offers: list, currency: str, rates: RateTable | None = None,
                     count: int = 1, spot: bool = False) -> tuple[GPU, Any]:
    """The variant of an ambiguous family name ('a100') that rents ``count`` GPUs for least
    in ``offers`` (machines as :func:`_machine_offer` picks them), and a note that says which
    and what the others cost; the family's default variant when none has an offer."""
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.cost.billing import hourly_price

    rates = rates or rates_from([])
    priced = []
    for gpu_id in res.candidates:
        offer, spread, _sized = _machine_offer(offers, gpu_id, currency, rates, count, spot)
        if offer is not None:  # one machine (or a cluster) before separate machines
            priced.append((spread == "separate machines",
                           hourly_price(offer, count, currency, rates), gpu_id))
    if not priced:
        return res.gpu, res.note
    priced.sort(key=lambda p: (p[0], p[1].amount, p[2]))
    _apart, best_price, best = priced[0]
    others = [msg("cost.variant.other", "{gpu} {price}/h", gpu=gpu_id, price=price)
              for _apart, price, gpu_id in priced[1:]]
    unrented = [c for c in res.candidates if c not in {p[2] for p in priced}]
    return default_catalog().get(best), msg(
        "cost.variant", "{query!r} names several variants: priced the cheapest in these "
        "prices, {gpu} ({price}/h for {count} GPU(s)){others}{unrented}; name the variant to "
        "choose another", query=res.query, gpu=best, price=best_price, count=count,
        others=msg("cost.variant.others", "; then {list}", list=Join(others))
        if others else "",
        unrented=msg("cost.variant.unrented", "; no offer for {list}", list=Join(unrented))
        if unrented else "")


def _machine_offer(offers: list, gpu_id: str, currency: str, rates: RateTable, count: int,
                   spot: bool) -> tuple[Any, str, bool]:
    """(the offer, how its machines hold the ``count`` GPUs, whether its machine is assumed
    from a price per GPU): the cheapest machine that holds them all (GPUs that work together
    need one); past one server (8 GPUs), whole servers of 8 or more as a cluster; where
    neither is in the price list, the cheapest way to rent them as separate machines."""
    from whichgpu.cost.billing import cheapest_offer, hourly_price
    from whichgpu.cost.capacity import SERVER_GPUS, Spread

    pool = [o for o in offers if o.gpu == gpu_id and o.spot == spot]
    size = count if count <= SERVER_GPUS else SERVER_GPUS
    machines = []
    for o in pool:
        if o.gpu_count >= count or (count > SERVER_GPUS and o.gpu_count >= SERVER_GPUS
                                     and count % o.gpu_count == 0):
            machines.append((o, False))
        elif o.instance_type is None and o.gpu_count == 1 and count % size == 0:
            # a price per GPU (no machine named): machines of the size asked, a server at most
            machines.append((o.model_copy(update={"gpu_count": size, "price_per_hour":
                                                  o.price_per_hour * size}), True))
    if machines:
        best, sized = min(machines, key=lambda p: (
            hourly_price(p[0], count, currency, rates).amount, p[0].provider))
        return best, Spread.ONE if count <= best.gpu_count else Spread.CLUSTER, sized
    offer = cheapest_offer(pool, gpu_id, currency, rates, gpus=count, spot=spot)
    return offer, Spread.SEPARATE, False


def _work(work: str | None) -> float | None:
    if work is None:
        return None
    amount = parse_count(work, what=msg("what.work", "amount of work"))
    if not 0 < amount <= MAX_WORK:
        raise InputError(msg("cost.range", "{field} must be more than 0 and at most {limit:.0e}, "
                             "got {v!r}", field=Field("work"), limit=MAX_WORK, v=str(work)))
    return amount


def _per(per: str | None, work: float | None) -> float:
    per_n = 1 if per is None else parse_count(per, what=msg("what.per", "'per'"))
    if not 0 < per_n <= MAX_WORK:
        raise InputError(msg("cost.range", "{field} must be more than 0 and at most {limit:.0e}, "
                             "got {v!r}", field=Field("per"), limit=MAX_WORK, v=str(per)))
    if work is None and per_n != 1:
        raise InputError(msg("cost.per_needs_work", "{per} sets the unit of a cost per unit of "
                             "work: give {work} too", per=Field("per"), work=Field("work")))
    return per_n


def _duration(duration: str | None, rate_of_work: str | None, work: float | None) -> Range:
    if rate_of_work is not None:
        if duration is not None:
            raise InputError(msg("flags.not_both", "give {a} or {b}, not both", a=Field("duration"),
                                 b=Field("rate_of_work")))
        if work is None:
            raise InputError(msg("cost.rate_needs_work", "{rate} needs {work} (how many units "
                                 "the run produces)", rate=Field("rate_of_work"),
                                 work=Field("work")))
        rate, per_s = parse_rate_of_work(rate_of_work)
        span = duration_for(work, rate, per_s=per_s)
    elif duration is None:
        raise InputError(msg("cost.needs_duration", "give {duration} (3h20m, 2h..4h) or {work} "
                             "with {rate}", duration=Field("duration"), work=Field("work"),
                             rate=Field("rate_of_work")))
    else:
        span = parse_duration_range(duration)
    if span.high <= 0:
        raise InputError(msg("cost.zero_duration", "{field} must be longer than zero",
                             field=Field("duration")))
    if span.high > MAX_RUN_S:
        raise InputError(msg("cost.too_long", "a run of more than 10 years is not a run; got "
                             "{days:,.0f} days", days=span.high / 86400))
    return span
