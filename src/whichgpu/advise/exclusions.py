"""Why a GPU size is excluded: it does not fit in memory, or no machine sold links its GPUs."""

from __future__ import annotations

from whichgpu.advise.machines import SERVER_GPUS, sizes_sold
from whichgpu.advise.options import Exclusion
from whichgpu.catalog.gpus import GPU
from whichgpu.catalog.offers import Offer
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Join, Message, msg
from whichgpu.vocabulary import ExclusionKind, Placement


def _to_buy(gpu: GPU) -> Message | str:
    """For a card nobody rents: what buying one costs, and the command that weighs it."""
    p = gpu.purchase_price
    if p is None:
        return ""
    if p.low == p.high:
        return msg("exclusion.to_buy", "; to buy: {low:,.0f} {currency} ({date}), 'whichgpu "
                   "tco {gpu}'", low=p.low, currency=p.currency, date=p.date, gpu=gpu.id)
    return msg("exclusion.to_buy.range", "; to buy: {low:,.0f}-{high:,.0f} {currency} ({date}), "
               "'whichgpu tco {gpu}'", low=p.low, high=p.high, currency=p.currency,
               date=p.date, gpu=gpu.id)


def _memory_exclusion(gpu: GPU, count: int, need: int, has_offer: bool = True,
                      adapted: list[Message] | None = None, band: float = 0.0) -> Exclusion:
    usable = gpu.usable_memory_bytes
    even = msg("exclusion.memory.even", " (even {how})", how=Join(adapted, " and ")) \
        if adapted else ""
    short = need - usable
    gb = short / 1e9
    # enough digits that a small shortfall does not read as 0.0
    missing = (msg("exclusion.gb.1", "{gb:.1f}", gb=gb) if gb >= 1 else
               msg("exclusion.gb.2", "{gb:.2f}", gb=gb) if gb >= 0.01 else
               msg("exclusion.gb.3", "{gb:.3f}", gb=gb))
    params = dict(need=need / 1e9, where=Placement(gpu.id, count), even=even,
                  usable=usable / 1e9, short=missing)
    if band and short <= band * usable:
        reason = msg("exclusion.memory.borderline", "borderline (within the memory estimate's "
                     "{band:.0%} uncertainty of the card: it may fit): needs {need:.1f} GB per "
                     "GPU on {where}{even}, has {usable:.1f} GB ({short} GB short)", band=band,
                     **params)
    else:
        reason = msg("exclusion.memory", "does not fit: needs {need:.1f} GB per GPU on "
                     "{where}{even}, has {usable:.1f} GB ({short} GB short)", **params)
    return Exclusion(gpu, count, ExclusionKind.MEMORY, reason, short, short / usable,
                     has_offer=has_offer)


def _machine_exclusion(gpu: GPU, count: int, replicas: int, need: int, pool: list[Offer],
                       wl: Workload) -> Exclusion:
    """No offer's machine holds the GPUs that must be linked: what is sold instead."""
    providers = sorted({o.provider for o in pool})
    params = dict(need=need / 1e9, where=Placement(gpu.id, count), gpu=gpu.id,
                  sizes=Join(sizes_sold(pool)), providers=Join(providers, last=" and "))
    if count > SERVER_GPUS:
        reason = msg("exclusion.machine.cluster", "fits ({need:.1f} GB per GPU on {where}) "
                     "but a cluster is made of whole servers of {server} GPUs, and this price "
                     "list has {gpu} only in machines of {sizes} GPU(s) ({providers})",
                     server=SERVER_GPUS, **params)
    else:
        reason = msg("exclusion.machine", "fits ({need:.1f} GB per GPU on {where}) but its "
                     "{count} GPUs work together and must be linked in one machine, and this "
                     "price list has {gpu} only in machines of {sizes} GPU(s) ({providers})",
                     count=count, **params)
    return Exclusion(gpu, count, ExclusionKind.OFFER, reason, has_offer=True)
