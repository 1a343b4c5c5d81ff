"""``tco`` and ``cost``: owning against renting, and what one run costs."""

from __future__ import annotations

from collections.abc import Sequence

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.requests import Cost, Tco
from whichgpu.catalog.prices import OfferSelection
from whichgpu.cost.build import CostResult, TcoResult
from whichgpu.cost.build import cost as run_cost
from whichgpu.cost.build import tco as run_tco


def _reader(ctx: Context, max_age: float | None):
    """What ``cost`` and ``tco`` read: the cheapest offer of each kind of their GPU."""

    def read(prices: str | None, gpus: Sequence[str]) -> OfferSelection:
        return ctx.offers(prices, max_age, gpus=list(gpus), cheapest_only=True)

    return read


def tco(q: Tco, ctx: Context = LOCAL) -> TcoResult:
    """What owning a GPU costs, when it breaks even against renting, rent or buy."""
    return run_tco(q.gpu, **q.fields(
        "purchase_price", "resale_value", "years", "host_share", "tdp", "load_factor",
        "utilization", "hours_per_month", "kwh_price", "pue", "cooling_per_hour",
        "maintenance_per_year", "rent_price", "currency", "max_age", "gpu_spec"),
        prices=q.prices, rate=q.rate, selection_for=_reader(ctx, q.max_age))


def cost(q: Cost, ctx: Context = LOCAL) -> CostResult:
    """What a run costs on the cheapest offer for a GPU, under the offer's billing rule."""
    return run_cost(q.gpu, q.duration, **q.fields(
        "count", "spot", "work", "unit", "per", "rate_of_work", "currency", "max_age"),
        prices=q.prices, rate=q.rate, selection_for=_reader(ctx, q.max_age))
