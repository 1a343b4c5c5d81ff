"""``tco`` and ``cost``: owning against renting, and what one run costs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.inputs.ownership import CostResult, TcoResult
from whichgpu.answers.inputs.ownership import cost as run_cost
from whichgpu.answers.inputs.ownership import tco as run_tco
from whichgpu.answers.requests import Cost, Tco
from whichgpu.catalog.prices import OfferSelection


def _reader(ctx: Context, max_age: float | None):
    """What ``cost`` and ``tco`` read: the cheapest offer of each kind of their GPU."""

    def read(prices: str | None, gpus: Sequence[str]) -> OfferSelection:
        return ctx.offers(prices, max_age, gpus=list(gpus), cheapest_only=True)

    return read


@dataclass(frozen=True)
class TcoAnswer(TcoResult):
    """``tco``'s result, and with ``--vs`` the rented GPU whose offer set the rent."""

    vs: dict[str, Any] | None = None

    def to_json(self, curve: bool = True) -> dict[str, Any]:
        data = super().to_json(curve)
        if self.vs is not None:
            data["vs"] = self.vs
        return data


def tco(q: Tco, ctx: Context = LOCAL) -> TcoResult:
    """What owning a GPU costs, when it breaks even against renting, rent or buy (with
    ``vs``: against renting another GPU)."""
    if q.vs is None:
        return _tco(q, ctx)
    from whichgpu.catalog.gpus import resolve_gpu
    from whichgpu.errors import InputError
    from whichgpu.messages import Field, msg

    if q.rent_price is not None:
        raise InputError(msg("flags.not_both", "give {a} or {b}, not both", a=Field("vs"),
                             b=Field("rent_price")))
    res = resolve_gpu(q.vs)
    selection = ctx.offers(q.prices, q.max_age, gpus=list(res.candidates or [res.gpu.id]),
                           cheapest_only=True)
    other = res.gpu
    if len(res.candidates) > 1:  # a family: the variant cheapest to rent
        from whichgpu.answers.inputs.ownership import cheapest_variant

        other, _said = cheapest_variant(res, list(selection.offers), q.currency or "USD")
    on_demand = [o for o in selection.offers if o.gpu == other.id and not o.spot]
    if not on_demand:
        raise InputError(msg("tco.vs.no_offer", "no on-demand offer for {gpu} in these prices: "
                             "give {rent} instead", gpu=other.id, rent=Field("rent_price")))
    best = min(on_demand, key=lambda o: o.price_per_gpu_hour.amount)
    price = best.price_per_gpu_hour
    result = _tco(q.model_copy(update={"rent_price": f"{price.amount!r}{price.currency}"}), ctx)
    said = msg("tco.vs", "renting {gpu} at {price}/h ({provider}) instead of owning {own}; "
               "both are counted for the same hours of use (a faster rented card needs fewer: "
               "scale {hours} to compare the same work)", gpu=other.id, price=price,
               provider=best.provider, own=result.gpu.id, hours=Field("hours_per_month"))
    vs = {"gpu": other.id, "rent_price": price.to_json(), "provider": best.provider,
          "feed": best.offer_set, "assumption": str(said)}
    values = {f.name: getattr(result, f.name) for f in fields(result)}
    values.update(prices=q.prices, selection=selection)
    return TcoAnswer(**values, vs=vs)


def _tco(q: Tco, ctx: Context) -> TcoResult:
    return run_tco(q.gpu, **q.fields(
        "purchase_price", "resale_value", "years", "host_share", "tdp", "load_factor",
        "utilization", "hours_per_month", "kwh_price", "pue", "cooling_per_hour",
        "maintenance_per_year", "rent_price", "currency", "max_age", "gpu_spec"),
        prices=q.prices, rate=q.rate, selection_for=_reader(ctx, q.max_age))


def cost(q: Cost, ctx: Context = LOCAL) -> CostResult:
    """What a run costs on the cheapest offer for a GPU, under the offer's billing rule."""
    result = run_cost(q.gpu, q.duration, **q.fields(
        "count", "spot", "work", "unit", "per", "rate_of_work", "currency", "max_age"),
        prices=q.prices, rate=q.rate, selection_for=_reader(ctx, q.max_age))
    if q.vs_api is None:
        return result
    return replace(result, vs_api=_cost_vs_api(q, result))


def _cost_vs_api(q: Cost, result: Any) -> Any:
    """``cost --vs-api MODEL``: the run's cost per million tokens against per-token APIs."""
    from whichgpu.cost import api_prices
    from whichgpu.cost.currency import convert
    from whichgpu.cost.task import cost_per_unit
    from whichgpu.cost.vs_api import compare_rate
    from whichgpu.errors import InputError
    from whichgpu.messages import Field, msg

    shown = result.shown
    if shown.work is None or not str(shown.unit).lower().startswith("token"):
        raise InputError(msg("vs_api.cost_needs_tokens", "{field} needs the work in tokens: "
                             "{work} and {unit}", field=Field("vs_api"),
                             work=Field("work", "10M"), unit=Field("unit", "token")))
    model = str(q.vs_api).strip().lower()
    tab = api_prices.table()  # the store's refreshed prices, else the shipped table
    rows = api_prices.for_model(tab.rows, {model})
    if not rows:
        known = sorted({p.model for p in tab.rows})
        raise InputError(msg("vs_api.unknown_model", "no per-token API price for {model!r}; "
                             "the table has {known}", model=model, known=", ".join(known)))
    per_m = cost_per_unit(shown.cost, shown.work, per=1e6)
    from dataclasses import replace

    return replace(compare_rate(model, per_m, rows, lambda m, cur: convert(m, cur,
                                                                          result.rates)),
                   prices_from=tab.to_json())
