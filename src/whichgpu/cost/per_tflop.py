"""Cost per TFLOP (S1): an hourly rental price divided by a throughput figure.

The figure is dense throughput at a named precision (``bf16``, ``fp16_acc16``, ``fp8`` ...) or a
figure set quoted by an article (``article-000:fp16``), so a ranking always says which number
it rests on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from whichgpu.catalog.gpus import FORM_FACTORS, GPU, PRECISIONS, VENDORS, Catalog, default_catalog
from whichgpu.errors import InputError, NotFoundError
from whichgpu.messages import Message, msg
from whichgpu.units import Money

if TYPE_CHECKING:
    from whichgpu.catalog.offers import Offer


@dataclass(frozen=True)
class TflopsFigure:
    """The throughput figure a cost-per-TFLOP rests on, and what it means."""

    tflops: float | None
    basis: str  # "bf16" or "article-000:fp16"
    meaning: str
    source: str | None
    status: str  # supported / unsupported / unknown


def precision_choices(catalog: Catalog | None = None) -> list[str]:
    catalog = catalog or default_catalog()
    return [*PRECISIONS, *catalog.quoted_sets()]


def tflops_figure(gpu: GPU, basis: str, catalog: Catalog | None = None) -> TflopsFigure:
    """The dense figure at ``basis`` (a precision key) or an article's quoted figure."""
    catalog = catalog or default_catalog()
    if ":" in basis:
        if basis not in catalog.quoted_sets():
            raise NotFoundError("precision", basis, precision_choices(catalog))
        q = catalog.quoted_figure(basis, gpu.id)
        if q is None:
            return TflopsFigure(None, basis, f"{basis} (not quoted for this GPU)", None, "unknown")
        return TflopsFigure(q.value, basis, f"as quoted by {q.source}: {q.note or ''}".strip(),
                            q.source, "supported")
    t = gpu.throughput_at(basis)
    return TflopsFigure(t.tflops if t.status == "supported" else None, basis, t.meaning,
                        t.source, t.status)


def _one_of(value: str | None, allowed: tuple[str, ...], what: Message) -> str | None:
    """``value`` lower-cased if it is one of ``allowed``; a clear error otherwise."""
    if value is None:
        return None
    v = value.strip().lower()
    if v not in allowed:
        raise InputError(msg("choice.catalog", "unknown {what} {v!r}: use one of {choices}",
                             what=what, v=value, choices=", ".join(allowed)))
    return v


def cost_per_tflop_hour(price_per_gpu_hour: Money, tflops: float | None) -> Money | None:
    """S1: hourly price / TFLOPS. None when the GPU has no such figure."""
    if not tflops:
        return None
    return price_per_gpu_hour / tflops


# ------------------------------------------------------------------------ the catalog table

SORT_KEYS = ("cost-per-tflop", "tflops", "memory", "bandwidth", "price", "id")


@dataclass(frozen=True)
class GpuRow:
    """One line of ``whichgpu gpus``: a GPU, the figure used, and its price if an offer exists."""

    gpu: GPU
    figure: TflopsFigure
    offer: Offer | None
    cost_per_tflop_hour: Money | None
    price_per_gpu_hour: Money | None = None  # in the display currency

    def to_json(self) -> dict:
        g = self.gpu
        data = {
            "id": g.id,
            "name": g.name,
            "vendor": g.vendor,
            "family": g.family,
            "form_factor": g.form_factor,
            "architecture": g.architecture.value,
            "memory_bytes": g.memory_bytes,
            "memory_usable_bytes": g.usable_memory_bytes,
            "memory_type": g.memory_type.value,
            "bandwidth_bytes_per_s": g.bandwidth_bytes_per_s,
            "tdp_watts": g.tdp_watts,
            "launch_year": g.launch_year.value,
            "interconnect": {
                "kind": g.interconnect.kind.value,
                "bandwidth_bytes_per_s": g.interconnect.bandwidth_bytes_per_s,
                "direction": g.interconnect.direction.value,
                "peer_to_peer": g.interconnect.peer_to_peer.value,
            },
            "tflops": {p: t.tflops for p, t in g.throughput.items() if t.status == "supported"},
            "tflops_unsupported": sorted(p for p, t in g.throughput.items()
                                         if t.status == "unsupported"),
            "precision": self.figure.basis,
            "precision_meaning": self.figure.meaning,
            "tflops_at_precision": self.figure.tflops,
        }
        if self.offer is not None or self.cost_per_tflop_hour is not None:
            data["price_per_hour"] = (self.price_per_gpu_hour.to_json()
                                      if self.price_per_gpu_hour else None)
            data["offer"] = self.offer.to_json() if self.offer else None
        data["cost_per_tflop_hour"] = (self.cost_per_tflop_hour.to_json()
                                       if self.cost_per_tflop_hour else None)
        return data


def catalog_rows(
    *,
    precision: str = "bf16",
    offers: list | None = None,
    vendor: str | None = None,
    min_memory_bytes: int | None = None,
    form_factor: str | None = None,
    priced_only: bool = False,
    sort: str = "cost-per-tflop",
    currency: str | None = None,
    rates=None,
    catalog: Catalog | None = None,
) -> list[GpuRow]:
    """The catalog as rows with the chosen throughput figure and, with offers, cost per TFLOP-h.

    Each GPU takes its cheapest on-demand offer (spot if that is all there is), compared and
    shown in ``currency`` (default: the offers' own currency when they share one).
    """
    from whichgpu.cost.billing import cheapest_offer
    from whichgpu.cost.currency import convert

    catalog = catalog or default_catalog()
    if offers and currency is None:
        currencies = {o.price_per_hour.currency for o in offers}
        currency = currencies.pop() if len(currencies) == 1 else "USD"
    if sort not in SORT_KEYS:
        raise NotFoundError("sort key", sort, SORT_KEYS)
    if precision not in precision_choices(catalog):
        raise NotFoundError("precision", precision, precision_choices(catalog))
    vendor = _one_of(vendor, VENDORS, msg("kind.vendor", "vendor"))
    form_factor = _one_of(form_factor, FORM_FACTORS, msg("kind.form_factor", "form factor"))
    rows = []
    for g in catalog.gpus:
        if vendor and g.vendor != vendor:
            continue
        if form_factor and g.form_factor != form_factor:
            continue
        if min_memory_bytes and g.memory_bytes < min_memory_bytes:
            continue
        figure = tflops_figure(g, precision, catalog)
        offer = None
        price = None
        if offers is not None:
            shown = currency or "USD"  # None only when there are no offers to price
            offer = (cheapest_offer(offers, g.id, shown, rates, spot=False)
                     or cheapest_offer(offers, g.id, shown, rates, spot=True))
        if priced_only and offer is None:
            continue
        if offer is not None:
            assert currency is not None  # set above from the offers
            price = convert(offer.price_per_gpu_hour, currency, rates)
        cpt = cost_per_tflop_hour(price, figure.tflops) if price else None
        rows.append(GpuRow(g, figure, offer, cpt, price))

    inf = float("inf")
    keys = {
        "cost-per-tflop": lambda r: (r.cost_per_tflop_hour.amount if r.cost_per_tflop_hour
                                     else inf, -(r.figure.tflops or 0)),
        "tflops": lambda r: -(r.figure.tflops or 0),
        "memory": lambda r: -r.gpu.memory_bytes,
        "bandwidth": lambda r: -r.gpu.bandwidth_bytes_per_s,
        "price": lambda r: r.price_per_gpu_hour.amount if r.price_per_gpu_hour else inf,
        "id": lambda r: r.gpu.id,
    }
    return sorted(rows, key=keys[sort])
