"""The recommender: memory decides first, speed second, then price (S27).

Every catalog GPU x 1/2/4/8 (and cluster sizes for pre-training) is tried: the memory estimate
filters, the speed estimate gives a time range, and every matching offer is costed under its
own billing rule and instance size; the offer that makes the job cheapest is kept (a lower
hourly price with a one-hour minimum can lose to a dearer per-second offer on a short job).
Options are ranked by the objective; what was excluded keeps its reason, per failing size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from whichgpu.advise.job import MAX_CONCURRENCY, Job
from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import MoneyRange, hourly_price, instances_needed
from whichgpu.cost.currency import RateTable, convert
from whichgpu.cost.task import task_cost
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import layout_for, max_concurrency, memory_band
from whichgpu.estimate.speed import SpeedEstimate, estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.units import Money, Range, format_duration, format_money

COUNTS = tuple(range(1, 9))  # every count a server holds (fit.COUNTS): 3 x RTX 3090 too
CLUSTER_COUNTS = (16, 32, 64, 128, 256, 512, 1024)
NEAR_TIE = 0.05  # options within 5 % of the best are shown as near-ties
SERVER_GPUS = 8  # GPUs in one server (HGX/DGX boards); more than this is a cluster

#: The rates that measure a workload's work, and the unit its cost is quoted per when no
#: amount of work is given: rate name -> (rate units per hour factor, unit label, units quoted).
_WORK_RATES = {
    "tokens_per_s": (3600, "1M training tokens", 1e6),
    "images_per_min": (60, "1,000 images", 1e3),
    "videos_per_hour": (1, "video", 1),
    "steps_per_s": (3600, "1,000 steps", 1e3),
}


@dataclass(frozen=True)
class Option:
    """One GPU configuration that can run the job, with its offer, time and cost."""

    gpu: GPU
    count: int  # GPUs per replica
    offer: Offer
    price_per_hour: Money  # for all GPUs of all replicas (whole instances), job's currency
    time_s: Range | None  # None for open-ended serving and jobs with no amount
    cost: MoneyRange  # total for the job (serving and no amount: per hour)
    memory_bytes: int  # per GPU
    speed: SpeedEstimate
    rate_name: str
    rate: Range
    batch: int = 1
    replicas: int = 1
    notes: tuple[str, ...] = ()
    near_tie: bool = False
    pareto: bool = False
    layout: str = "single GPU"
    assumptions: tuple[str, ...] = ()
    unit_cost: MoneyRange | None = None  # no amount given: cost per ``unit`` of work
    unit: str | None = None
    serving: dict[str, Any] | None = None  # sizing for a request rate (advise/serving.py)
    # spot offers: the expected cost and time with interruptions (advise/spot_risk.py)
    spot_risk: Any = None
    workload: Workload | None = field(default=None, compare=False)  # as run (for --export)

    @property
    def gpus(self) -> int:
        return self.count * self.replicas

    @property
    def label(self) -> str:
        n = self.gpus
        return self.gpu.id if n == 1 else f"{n} x {self.gpu.id}"

    @property
    def lacks_fp8(self) -> bool:
        return any(n.startswith("no FP8") or n.startswith("no FP4") for n in self.notes)

    def to_json(self) -> dict[str, Any]:
        data = {
            "gpu": self.gpu.id, "count": self.gpus,
            "gpus_per_replica": self.count, "replicas": self.replicas, "layout": self.layout,
            "price_per_hour": self.price_per_hour.to_json(),
            "time_s": self.time_s.to_json() if self.time_s else None,
            "cost": self.cost.to_json(), "memory_bytes": self.memory_bytes,
            "headroom_bytes": self.gpu.usable_memory_bytes - self.memory_bytes,
            "rate": {"name": self.rate_name, **self.rate.to_json()}, "batch": self.batch,
            "bound": self.speed.bound, "confidence": self.speed.confidence,
            "precision": self.speed.precision,
            "offer": {"provider": self.offer.provider, "offer_set": self.offer.offer_set,
                      "gpu_count": self.offer.gpu_count,
                      "instances": instances_needed(self.offer, self.count) * self.replicas,
                      "spot": self.offer.spot, "billing": self.offer.billing_text(),
                      "region": self.offer.region, "instance_type": self.offer.instance_type,
                      "source": self.offer.source, "observed_at": self.offer.observed_at},
            "pricing": "spot" if self.offer.spot else "on-demand",
            "notes": list(self.notes), "assumptions": list(self.assumptions),
            "near_tie": self.near_tie, "pareto": self.pareto,
        }
        if self.unit_cost is not None:
            data["cost_per_unit"] = {"unit": self.unit, **self.unit_cost.to_json(9)}
        if self.serving is not None:
            data.update(self.serving)
        if self.spot_risk is not None:
            risk = self.spot_risk.to_json()
            data["expected_cost"] = risk["expected_cost"]
            data["spot_risk"] = risk
        return data


@dataclass(frozen=True)
class Exclusion:
    """One GPU size that cannot run the job, and why.

    ``shortfall`` is in the kind's own unit (memory: bytes missing per GPU; deadline: seconds
    late; budget and price: money over; speed: tokens/s missing per user); ``gap`` is the same
    as a fraction of what was needed, so misses of different kinds compare.
    """

    gpu: GPU
    count: int
    kind: str  # memory, offer, deadline, budget, price, speed
    reason: str
    shortfall: float = 0.0
    gap: float = 0.0
    works_with: int | None = None  # the fewest GPUs of this kind that do run the job
    has_offer: bool = True  # the price list rents this GPU (spot or on-demand as asked)

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "kind": self.kind,
                "reason": self.reason, "gap": round(self.gap, 6),
                "works_with": self.works_with, "has_offer": self.has_offer}


@dataclass(frozen=True)
class OwnedOption:
    """Your own card (``--gpu 12GB``, ``--gpu-spec``) at one count: owned, not rented.

    It has no rental price: the fit always, the speed and time where the spec gives the
    figures a speed needs (``missing`` otherwise), the cost of owning it per hour of use
    where the spec gives a purchase price and power (``cost_note`` otherwise).
    """

    gpu: GPU
    count: int
    fits: bool
    memory_bytes: int
    reason: str  # the fit in words
    option: Option | None = None  # time and rate (price: the ownership cost, or 0 if unknown)
    missing: tuple[str, ...] = ()  # --gpu-spec keys a speed still needs
    cost_per_hour: Money | None = None  # owning it, per hour of use, all `count` cards
    cost_note: str = ""
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        o = self.option
        data: dict[str, Any] = {
            "gpu": self.gpu.id, "count": self.count, "owned": True, "fits": self.fits,
            "memory_bytes": self.memory_bytes, "usable_bytes": self.gpu.usable_memory_bytes,
            "reason": self.reason, "rental_price": None,
            "missing_for_speed": list(self.missing),
            "cost_per_hour": self.cost_per_hour.to_json() if self.cost_per_hour else None,
            "cost_note": self.cost_note, "notes": list(self.notes),
        }
        if o is not None:
            data.update({"layout": o.layout, "time_s": o.time_s.to_json() if o.time_s else None,
                         "rate": {"name": o.rate_name, **o.rate.to_json()},
                         "bound": o.speed.bound, "confidence": o.speed.confidence,
                         "cost": o.cost.to_json() if self.cost_per_hour else None})
        return data


@dataclass
class Recommendation:
    job: Job
    currency: str
    options: list[Option]
    excluded: list[Exclusion]
    explanation: list[str] = field(default_factory=list)
    what_would_change: list[str] = field(default_factory=list)
    closest: str | None = None
    max_gpus: int | None = None
    only: list[str] | None = None  # the GPUs compared when narrowed (catalog ids)
    offered: frozenset[str] = frozenset()  # GPU ids the price list rents (as asked: spot or not)
    owned: list[OwnedOption] = field(default_factory=list)  # your own card, at each count

    @property
    def best(self) -> Option | None:
        return self.options[0] if self.options else None

    @property
    def ranking(self) -> str:
        """What the options are sorted by, in words."""
        if self.job.objective == "time":
            return "fastest per user" if self.job.per_hour else "shortest time"
        if self.job.per_hour or (self.job.kind == "none" and not _unit_ranked(self.job)):
            return "cost per hour"
        if self.job.kind == "none":
            unit = next((o.unit for o in self.options if o.unit), "unit of work")
            return f"cost per {unit}"
        return "total cost"

    def pareto(self) -> list[Option]:
        return [o for o in self.options if o.pareto]

    def to_json(self) -> dict[str, Any]:
        w = self.job.workload
        return {
            "model": w.model.name, "task": w.task, "quant": w.quant_name,
            "job": {"kind": self.job.kind, "amount": self.job.amount,
                    "objective": self.job.objective},
            "ranking": self.ranking,
            "currency": self.currency,
            "max_gpus": self.max_gpus, "only": self.only,
            "options": [o.to_json() for o in self.options],
            "pareto": [o.label for o in self.pareto()],
            "excluded": [e.to_json() for e in self.excluded],
            "explanation": self.explanation,
            "what_would_change": self.what_would_change,
            "closest": self.closest,
            "owned": [o.to_json() for o in self.owned],
        }


def _unit_ranked(job: Job) -> bool:
    """No amount of work for a job that ends (training, images, videos): the options are
    ranked by what the same work costs (per 1M tokens, per 1,000 images), not by the hour."""
    w = job.workload
    return job.kind == "none" and (w.is_training or w.is_diffusion)


def _job_currency(job: Job, offers: list[Offer]) -> str:
    if job.currency:
        return job.currency
    currencies = {o.price_per_hour.currency for o in offers}
    return currencies.pop() if len(currencies) == 1 else "USD"


def _counts(w: Workload) -> tuple[int, ...]:
    return COUNTS + (CLUSTER_COUNTS if w.task in ("pretrain", "full-ft") else ())


def recommend(job: Job, offers: list[Offer], *, catalog: Catalog | None = None,
              rates: RateTable | None = None, profile: Any = None,
              gpus: list[GPU] | None = None, max_gpus: int | None = None,
              owned: GPU | None = None, owned_count: int = 1) -> Recommendation:
    """Rank every GPU configuration that can run ``job`` on ``offers``; explain the rest.

    ``gpus`` narrows the GPUs compared (``--only``); ``max_gpus`` limits a configuration to at
    most that many GPUs in all, replicas included (1: single cards). ``owned`` is the user's
    own card (``owned_count`` of them): evaluated at every count up to that which its layout
    allows, as owned hardware (no rental price), beside the ranked rentals.
    """
    if max_gpus is not None and (isinstance(max_gpus, bool) or int(max_gpus) < 1):
        raise InputError(f"--max-gpus must be at least 1, got {max_gpus}")
    if job.kind == "rate":  # replicas x TP for a request rate and latency targets
        from whichgpu.advise.serving import recommend_for_rate

        return recommend_for_rate(job, offers, catalog=catalog, rates=rates, profile=profile,
                                  gpus=gpus, max_gpus=max_gpus)
    catalog = catalog or default_catalog()
    currency = _job_currency(job, offers)
    options: list[Option] = []
    excluded: list[Exclusion] = []
    w = job.workload
    counts = tuple(c for c in _counts(w) if max_gpus is None or c <= max_gpus)
    for gpu in gpus or catalog.gpus:
        gpu_options, gpu_excluded = _evaluate_gpu(job, gpu, offers, currency, rates, profile,
                                                  counts, max_gpus)
        options += gpu_options
        excluded += gpu_excluded
    _rank(job, options)
    rec = Recommendation(job, currency, options, excluded, max_gpus=max_gpus,
                         only=[g.id for g in gpus] if gpus else None,
                         offered=frozenset(o.gpu for o in offers if job.spot or not o.spot))
    from whichgpu.advise.explain import explain
    from whichgpu.advise.spot_risk import explain_spot

    explain(rec, offers, catalog, rates, profile)
    rec.explanation += explain_spot(rec)
    if owned is not None:
        rec.owned = owned_options(job, owned, owned_count, currency, rates, profile)
    _note_no_offload(rec)
    return rec


def owned_options(job: Job, gpu: GPU, count: int, currency: str,
                  rates: RateTable | None = None, profile: Any = None) -> list[OwnedOption]:
    """Your card at each count from 1 to ``count`` that the layout allows: fit, speed and
    the cost of owning it (never a rental price)."""
    from whichgpu.catalog.offers import BillingRule
    from whichgpu.catalog.user_gpu import missing_for_speed
    from whichgpu.estimate.memory.fit import counts_for
    from whichgpu.estimate.platform import EngineUnavailable, engine_for

    if isinstance(count, bool) or int(count) < 1:
        raise InputError(f"--count must be at least 1, got {count}")
    per_card, cost_note = _ownership_per_hour(gpu, currency, rates)
    out: list[OwnedOption] = []
    try:
        w, engine_note = engine_for(job.workload, gpu)
    except EngineUnavailable as exc:
        return [OwnedOption(gpu, 1, False, 0, str(exc))]
    notes = (engine_note,) if engine_note else ()
    usable = gpu.usable_memory_bytes
    for n in counts_for(w, count):
        wl = layout_for(w, n)
        batch = 1
        if job.kind in ("tokens", "daily", "serving"):
            batch = max(1, max_concurrency(wl, gpu, n, limit=job.concurrency or MAX_CONCURRENCY))
            wl = wl.with_(batch=batch)
        wl, need = _fit(wl, w, usable)
        where = _where(gpu, n)
        if need > usable:
            out.append(OwnedOption(gpu, n, False, need, _memory_exclusion(gpu, n, need).reason,
                                   notes=notes))
            continue
        reason = f"fits: {need / 1e9:.1f} GB per GPU on {where}, {usable / 1e9:.1f} GB usable"
        missing = tuple(missing_for_speed(gpu))
        if missing:
            out.append(OwnedOption(gpu, n, True, need, reason, missing=missing,
                                   cost_note=cost_note, notes=notes))
            continue
        price = per_card * n if per_card is not None else Money(0.0, currency)
        offer = Offer(provider="you (owned)", gpu=gpu.id, gpu_count=n, price_per_hour=price,
                      billing=BillingRule(), offer_set="owned",
                      note="your own hardware: the price is the cost of owning it")
        option = _option(job, wl, gpu, n, [offer], need, batch, currency, rates, profile, None)
        if isinstance(option, Exclusion):
            out.append(OwnedOption(gpu, n, True, need, f"{reason}; {option.reason}",
                                   cost_note=cost_note, notes=notes))
            continue
        out.append(OwnedOption(gpu, n, True, need, reason, option=option,
                               cost_per_hour=price if per_card is not None else None,
                               cost_note=cost_note,
                               notes=notes + tuple(x for x in option.notes if x not in notes)))
    return out


def _ownership_per_hour(gpu: GPU, currency: str, rates: RateTable | None,
                        ) -> tuple[Money | None, str]:
    """What owning one card costs per hour of use (S9's defaults: 3 years, 60 % use,
    $0.10/kWh), and how that was reached or what it lacks."""
    from whichgpu.cost.ownership import ownership, ownership_inputs

    try:
        inputs = ownership_inputs(gpu, rates=rates, currency=currency)
    except InputError as exc:
        lacks = "purchase price" if gpu.purchase_price is None else "power"
        key = "price=329USD" if gpu.purchase_price is None else "tdp=170W"
        return None, (f"owned: no rental price, and no cost of owning it without its {lacks} "
                      f"(--gpu-spec {key}); {exc}")
    o = ownership(inputs, rates)
    per_hour = convert(o.effective_cost_per_used_hour, currency, rates)
    return per_hour, (f"owned: no rental price; owning it costs about {format_money(per_hour)} "
                      f"per hour of use ({inputs.years:g} years, {inputs.utilization:.0%} use, "
                      f"electricity at {format_money(inputs.kwh_price)}/kWh: 'whichgpu tco' "
                      "takes every input)")


def _note_no_offload(rec: Recommendation) -> None:
    """Say once why cards too small were not tried with weights in host RAM."""
    from whichgpu.estimate.memory.offload_plan import no_offload_reason

    w = rec.job.workload
    why = no_offload_reason(w)
    if why and any(e.kind == "memory" and e.count == 1 for e in rec.excluded):
        rec.explanation.append(f"Cards too small for the whole model were not tried with part "
                               f"of it in host RAM: {why}.")


def _where(gpu: GPU, count: int) -> str:
    return gpu.id if count == 1 else f"{count} x {gpu.id}"


def _evaluate_gpu(job: Job, gpu: GPU, offers, currency, rates, profile, counts, max_gpus):
    """Options for one GPU, and the sizes of it that fail: every failing size below the
    smallest that works, or (when no size works) the nearest miss."""
    from whichgpu.estimate.platform import EngineUnavailable, engine_for

    try:
        w, engine_note = engine_for(job.workload, gpu)
    except EngineUnavailable as exc:  # the engine the user named does not run on this card
        return [], [Exclusion(gpu, 1, "engine", str(exc).split(": ", 1)[-1],
                              has_offer=any(o.gpu == gpu.id for o in offers))]
    if engine_note:
        job = replace(job, workload=w)
    # --spot prices each size on spot (by its expected cost) and on-demand, so that on-demand
    # can win a job too long or too little checkpointed for interruptible capacity
    pools = [[o for o in offers if o.gpu == gpu.id and o.spot == spot]
             for spot in ((True, False) if job.spot else (False,))]
    pools = [p for p in pools if p]
    pool = [o for p in pools for o in p]
    usable = gpu.usable_memory_bytes
    opts: list[Option] = []
    misses: list[Exclusion] = []
    for count in counts:
        if count > SERVER_GPUS and w.task != "pretrain" and \
                any(o.count <= SERVER_GPUS for o in opts):
            break  # a cluster only when one server is not enough (pre-training: always, S5)
        try:
            wl = layout_for(w, count)
        except InputError:
            continue
        wl, spilled = _with_offload(wl, gpu, count)
        if spilled is not None and not spilled.host_ok:
            misses.append(_memory_exclusion(
                gpu, count, estimate_memory(layout_for(w, count)).total_bytes, bool(pool),
                [f"with llama.cpp offload ({spilled.flags}) it needs "
                 f"{spilled.host_bytes / 1e9:.1f} GB of host RAM, more than the "
                 f"{spilled.memory.host.usable_ram_bytes / 1e9:.0f} GB free (--host-ram)"]))
            continue
        batch = 1
        if job.kind in ("tokens", "daily", "serving"):
            cap = job.concurrency or MAX_CONCURRENCY
            batch = max_concurrency(wl, gpu, count, limit=cap)
            if job.concurrency and batch < job.concurrency:
                batch = 0
            if batch == 0:
                need = estimate_memory(wl.with_(batch=job.concurrency or 1)).total_bytes
                misses.append(_memory_exclusion(gpu, count, need, bool(pool)))
                continue
            wl = wl.with_(batch=batch)
        wl, need = _fit(wl, w, usable)
        if need > usable:
            misses.append(_memory_exclusion(gpu, count, need, bool(pool), _adapted(wl, w),
                                            memory_band(wl)))
            continue
        if not pool:
            pricing = "spot" if job.spot else "on-demand"
            misses.append(Exclusion(gpu, count, "offer",
                                    f"fits ({need / 1e9:.1f} GB per GPU on "
                                    f"{_where(gpu, count)}) but the price list has no "
                                    f"{pricing} offer for it{_to_buy(gpu)}", has_offer=False))
            break  # no offer for one GPU is no offer for more
        for priced_pool in pools:
            option = _option(job, wl, gpu, count, priced_pool, need, batch, currency, rates,
                             profile, max_gpus)
            if isinstance(option, Exclusion):
                misses.append(option)
                continue
            if engine_note:
                option = replace(option, notes=(engine_note, *option.notes))
            opts.append(option)
    if opts:
        fewest = min(o.count for o in opts)
        return opts, [replace(m, works_with=fewest) for m in misses if m.count < fewest]
    if misses:
        return [], [min(misses, key=lambda m: (m.gap, m.count))]
    return [], []


def evaluate(job: Job, gpu: GPU, count: int, offers: list[Offer], currency: str, *,
             rates: RateTable | None = None, profile: Any = None,
             max_gpus: int | None = None) -> Option | Exclusion | None:
    """One GPU size for ``job`` (used to test what a change to the job would do)."""
    if job.kind == "rate":
        from whichgpu.advise.serving import evaluate_layout

        return evaluate_layout(job, gpu, count, offers, currency, rates=rates,
                               profile=profile, max_gpus=max_gpus)
    opts, misses = _evaluate_gpu(job, gpu, offers, currency, rates, profile, (count,),
                                 max_gpus)
    return opts[0] if opts else misses[0] if misses else None


def _fit(wl: Workload, asked: Workload, usable: int) -> tuple[Workload, int]:
    """The workload as asked, or (when that does not fit) what users do on a smaller card,
    as long as the user did not say otherwise: the smallest need of the tries."""
    need = estimate_memory(wl).total_bytes
    if need <= usable:
        return wl, need
    tries = []
    if wl.is_diffusion and wl.offload == "none" and wl.task != "image-lora":
        # ComfyUI and diffusers users on smaller cards: the text encoders leave the GPU once
        # the prompt is encoded. Same images, a little slower.
        tries.append(wl.with_(offload="model"))
    if wl.is_diffusion and not asked.vae_tiling and wl.task != "image-lora":
        # ComfyUI retries a decode that runs out of memory tiled (VAE Decode falls back to
        # tiled decoding); diffusers users call vae.enable_tiling(): the same output
        base = tries[-1] if tries else wl
        tries.append(base.with_(vae_tiling=True))
    if wl.is_training and asked.gradient_checkpointing is None and not wl.uses_checkpointing:
        # Trainers (HF Trainer, axolotl, torchtitan) turn activation checkpointing on when
        # the activations do not fit: the same training, about a third more compute.
        tries.append(wl.with_(gradient_checkpointing=True))
    best = (need, wl)
    for t in tries:
        n = estimate_memory(t).total_bytes
        if n <= usable:
            return t, n
        best = min(best, (n, t), key=lambda p: p[0])
    return best[1], best[0]


def _with_offload(wl: Workload, gpu: GPU, count: int):
    """llama.cpp on a card too small for the whole model: the layout with the fewest experts
    (or layers) in host RAM that fits, as llama.cpp's own --fit chooses; (workload, plan),
    plan None when nothing is moved."""
    from whichgpu.estimate.memory.offload_plan import offload_plan

    plan = offload_plan(wl, gpu, count)
    if plan is None:
        return wl, None
    return (plan.workload if plan.host_ok else wl), plan


def _adapted(wl: Workload, asked: Workload) -> list[str]:
    """The adaptations ``_fit`` made, in words."""
    out = []
    if wl.offload != asked.offload:
        out.append(f"with --offload {wl.offload}")
    if wl.uses_checkpointing and not asked.uses_checkpointing:
        out.append("with gradient checkpointing")
    if wl.vae_tiling and not asked.vae_tiling:
        out.append("with --vae-tiling")
    return out


def _to_buy(gpu: GPU) -> str:
    """For a card nobody rents: what buying one costs, and the command that weighs it."""
    p = gpu.purchase_price
    if p is None:
        return ""
    span = f"{p.low:,.0f}" if p.low == p.high else f"{p.low:,.0f}-{p.high:,.0f}"
    return f"; to buy: {span} {p.currency} ({p.date}), 'whichgpu tco {gpu.id}'"


def _memory_exclusion(gpu: GPU, count: int, need: int, has_offer: bool = True,
                      adapted: list[str] | None = None, band: float = 0.0) -> Exclusion:
    usable = gpu.usable_memory_bytes
    even = f" (even {' and '.join(adapted)})" if adapted else ""
    edge = ("borderline (within the memory estimate's "
            f"{band:.0%} uncertainty of the card: it may fit): " if band and
            need - usable <= band * usable else "does not fit: ")
    return Exclusion(gpu, count, "memory",
                     f"{edge}needs {need / 1e9:.1f} GB per GPU on {_where(gpu, count)}"
                     f"{even}, has {usable / 1e9:.1f} GB ({_gb(need - usable)} GB short)",
                     need - usable, (need - usable) / usable, has_offer=has_offer)


def _gb(n: float) -> str:
    """Bytes as GB with enough digits that a small shortfall does not read as 0.0."""
    gb = n / 1e9
    return f"{gb:.1f}" if gb >= 1 else f"{gb:.2f}" if gb >= 0.01 else f"{gb:.3f}"


def _main_rate(speed: SpeedEstimate) -> str:
    for name in _WORK_RATES:
        if name in speed.rates:
            return name
    return next(iter(speed.rates))


def _layout(wl: Workload, replicas: int) -> str:
    """How the GPUs are used: 'single GPU', 'tp=4', 'dp=64 ZeRO-3', '2 replicas of 2 GPUs'."""
    if wl.gpus == 1:
        base = "single GPU"
    elif wl.is_training:
        parts = [f"tp={wl.tp_degree}"] if wl.tp_degree > 1 else []
        if wl.pp_degree > 1:
            parts.append(f"pp={wl.pp_degree}")
        parts.append(f"dp={wl.dp_degree}" + (f" ZeRO-{wl.zero_stage}" if wl.zero_stage else ""))
        base = " ".join(parts)
    elif wl.is_diffusion:
        base = f"{wl.gpus} independent pipelines"
    else:
        base = f"tp={wl.tp_degree}" + (f" pp={wl.pp_degree}" if wl.pp_degree > 1 else "")
    if replicas == 1:
        return base
    if wl.gpus == 1:
        return f"{replicas} replicas of 1 GPU"
    return f"{replicas} replicas of {wl.gpus} GPUs, {base}"


def _assumptions(offer: Offer, count: int, replicas: int) -> list[str]:
    """What pricing ``count`` GPUs on ``offer`` assumes (instance sizes, servers, clusters)."""
    out = []
    instances = instances_needed(offer, count)
    paid = instances * offer.gpu_count
    each = " per replica" if replicas > 1 else ""
    if paid > count:
        out.append(f"{offer.provider} rents {offer.gpu_count}-GPU instances: {paid} GPUs paid "
                   f"for{each}, {count} used")
    if offer.gpu_count < count <= SERVER_GPUS:
        out.append(f"priced as {instances} x the {offer.gpu_count}-GPU offer of "
                   f"{offer.provider}; assumes they come as one {count}-GPU server at the "
                   "same price per GPU (the speed assumes the server's own links)")
    elif offer.gpu_count < count:
        servers = math.ceil(count / SERVER_GPUS)
        out.append(f"a {count}-GPU cluster ({servers} servers of {SERVER_GPUS}, linked by a "
                   f"cluster network) priced at {offer.provider}'s {offer.gpu_count}-GPU "
                   "offer: the price list does not say such a cluster can be rented; large "
                   "clusters are usually reserved in advance, at other prices")
    return out


def _option(job: Job, wl: Workload, gpu: GPU, count: int, pool: list[Offer], need: int,
            batch: int, currency: str, rates, profile, max_gpus) -> Option | Exclusion:
    speed = estimate_speed(wl, gpu, count, profile=profile, check_fit=False, saturation=False)
    notes: list[str] = []
    replicas = 1
    kind = job.kind
    if kind == "tokens":
        rate_name, rate = "output_tokens_per_s", speed.rates["output_tokens_per_s"]
        seconds = rate.inverse(job.tokens)
    elif kind == "daily":
        rate_name, rate = "output_tokens_per_s", speed.rates["output_tokens_per_s"]
        seconds = rate.inverse(job.tokens_per_day)
        replicas = max(1, math.ceil(seconds.typical / 86400))
        if replicas > 1:
            notes.append(f"{replicas} replicas to finish the daily volume within 24 h")
    elif kind == "serving":
        rate_name = "decode_tokens_per_s_per_sequence"
        replicas = max(1, math.ceil(job.users / max(batch, 1)))
        per_replica = math.ceil(job.users / replicas)
        s = speed if per_replica == batch else estimate_speed(
            wl.with_(batch=per_replica), gpu, count, profile=profile, check_fit=False,
            saturation=False)
        while s.rates[rate_name].typical < job.tokens_per_s_each and per_replica > 1:
            replicas *= 2
            per_replica = math.ceil(job.users / replicas)
            s = estimate_speed(wl.with_(batch=per_replica), gpu, count, profile=profile,
                               check_fit=False, saturation=False)
        rate = s.rates[rate_name]
        if rate.typical < job.tokens_per_s_each:
            missing = job.tokens_per_s_each - rate.typical
            return Exclusion(gpu, count, "speed",
                             f"too slow: {rate.typical:.0f} tokens/s per user even alone, "
                             f"{job.tokens_per_s_each:g} wanted", missing,
                             missing / job.tokens_per_s_each)
        speed, batch = s, per_replica
        seconds = None
        if replicas > 1:
            notes.append(f"{replicas} replicas of {count} GPU(s), {per_replica} users each")
    elif kind == "images":
        rate_name, rate = "images_per_min", speed.rates["images_per_min"]
        seconds = rate.inverse(job.images * 60)
    elif kind == "videos":
        rate_name = "seconds_per_video"
        rate = speed.times["seconds_per_video"]
        seconds = rate.scale(job.videos)
    elif kind == "steps":
        rate_name = "step_s"
        rate = speed.times["step_s"]
        seconds = rate.scale(job.steps)
    elif kind == "train-tokens":
        rate_name, rate = "tokens_per_s", speed.rates["tokens_per_s"]
        seconds = rate.inverse(job.train_tokens)
    else:  # no amount: cost per hour, and per unit of work
        rate_name = _main_rate(speed)
        rate = speed.rates[rate_name]
        seconds = None
    if max_gpus is not None and count * replicas > max_gpus:
        what = "the daily volume" if kind == "daily" else f"{job.users} users"
        return Exclusion(gpu, count, "speed",
                         f"needs {replicas} replicas of {count} ({count * replicas} GPUs) for "
                         f"{what}, more than --max-gpus {max_gpus}",
                         count * replicas - max_gpus, count * replicas / max_gpus - 1)

    # every matching offer, costed under its own billing rule and instance size
    priced = []
    for offer in pool:
        price = hourly_price(offer, count, currency, rates) * replicas
        if seconds is None:
            cost = MoneyRange(price, price, price)
        else:
            # the billed machine time; a daily volume over replicas costs the same GPU-hours
            cost = task_cost(offer, seconds, gpus=count).cost.convert(currency, rates)
            if replicas > 1 and kind != "daily":
                cost = cost.scale(replicas)
        priced.append((offer, price, cost, _spot(job, wl, offer, count, replicas, seconds,
                                                 speed, price, rates)))
    if job.max_price_per_hour is not None:
        cap = convert(job.max_price_per_hour, currency, rates)
        within = [p for p in priced if p[1].amount <= cap.amount]
        if not within:
            cheapest = min(p[1] for p in priced)
            return Exclusion(gpu, count, "price",
                             f"over budget per hour: {format_money(cheapest)}/h > "
                             f"{format_money(cap)}/h", cheapest.amount - cap.amount,
                             cheapest.amount / cap.amount - 1)
        priced = within
    offer, price, cost, risk = min(priced, key=lambda p: (_ranked(p[2], p[3]).typical.amount,
                                                          p[1].amount, p[0].provider))
    if kind == "daily":
        seconds = seconds.scale(1 / replicas)  # wall time per day
    if job.deadline_s is not None and seconds is not None:
        if seconds.typical > job.deadline_s:
            late = seconds.typical - job.deadline_s
            return Exclusion(gpu, count, "deadline",
                             f"misses the deadline: about {format_duration(seconds.typical)} "
                             f"> {format_duration(job.deadline_s)}", late,
                             late / job.deadline_s)
    if job.budget is not None:
        cap = convert(job.budget, currency, rates)
        if _ranked(cost, risk).typical.amount > cap.amount:
            return Exclusion(gpu, count, "budget",
                             f"over budget: about {format_money(cost.typical)} > "
                             f"{format_money(cap)}", cost.typical.amount - cap.amount,
                             cost.typical.amount / cap.amount - 1)
    unit_cost = unit = None
    if _unit_ranked(job) and rate_name in _WORK_RATES and rate.low > 0:
        per_hour, unit, per = _WORK_RATES[rate_name]
        unit_cost = MoneyRange(*(price * (per / (r * per_hour))
                                 for r in (rate.high, rate.typical, rate.low)))
    notes += list(speed.warnings)
    w = job.workload
    if wl.offload != w.offload:
        notes.append(f"with --offload {wl.offload}: components wait in CPU memory between "
                     "stages (a little slower, same output)")
    if wl.uses_checkpointing and not w.uses_checkpointing:
        notes.append("with gradient checkpointing (activations recomputed in the backward "
                     "pass: the same training, about a third more compute)")
    if wl.vae_tiling and not w.vae_tiling:
        notes.append("with --vae-tiling: the VAE decodes overlapping tiles (the peak of a "
                     "large image or video falls; the decode takes longer)")
    if wl.offload_requested and not w.offload_requested:
        est = estimate_memory(wl)
        place = est.details.get("placement") or {}
        what = []
        if place.get("host_expert_layers"):
            what.append(f"the experts of {place['host_expert_layers']} layer(s)")
        if place.get("cpu_layers"):
            what.append(f"{place['cpu_layers']} layer(s)")
        decode = speed.rates.get("decode_tokens_per_s_per_sequence")
        notes.append(f"{_where(gpu, count)} + {' and '.join(what)} in host RAM "
                     f"({place.get('flags', '')}; needs {est.host_total_bytes / 1e9:.1f} GB of "
                     "RAM)" + (f", about {decode.typical:,.0f} tokens/s per sequence"
                               if decode else ""))
    qf = wl.quant_format
    if qf.compute in ("fp8", "fp4") and not gpu.supports(qf.compute):
        notes.append(f"no {qf.compute.upper()} on {gpu.id}: {qf.name} weights run through "
                     "16-bit matmuls")
    if w.model.approximate:
        notes.append("generic model from a bare size: approximate")
    band = memory_band(wl)
    if gpu.usable_memory_bytes - need <= band * gpu.usable_memory_bytes:
        notes.append(f"borderline fit: {need / 1e9:.1f} GB of {gpu.usable_memory_bytes / 1e9:.1f}"
                     f" GB is within the memory estimate's {band:.0%} uncertainty of the card")
    if offer.spot and risk is None and seconds is None and not job.per_hour:
        notes.append("spot: give the amount of work (--steps, --images, --tokens ...) for its "
                     "expected cost with interruptions; ranked here at its price")
    return Option(gpu, count, offer, price, seconds, cost, need, speed, rate_name, rate,
                  batch, replicas, tuple(notes), layout=_layout(wl, replicas),
                  assumptions=tuple(_assumptions(offer, count, replicas))
                  + (tuple(risk.assumptions) if risk is not None else ()),
                  unit_cost=unit_cost, unit=unit, spot_risk=risk, workload=wl)


def _spot(job: Job, wl: Workload, offer: Offer, count: int, replicas: int, seconds,
          speed: SpeedEstimate, price: Money, rates: RateTable | None):
    """The spot risk of pricing this option on ``offer`` (None when it is on-demand)."""
    if not offer.spot:
        return None
    from whichgpu.advise.spot_risk import spot_risk

    return spot_risk(job, wl, offer, count, replicas, seconds, speed, price, rates)


def _ranked(cost: MoneyRange, risk) -> MoneyRange:
    """What an option is ranked and budgeted by: a spot option's expected cost."""
    from whichgpu.advise.spot_risk import expected_cost

    return expected_cost(risk) or cost


def rank_cost(job: Job, o: Option) -> float:
    """What the cost objective sorts by: the job's cost (a spot option's expected cost), or
    per unit of work (no amount)."""
    if _unit_ranked(job) and o.unit_cost is not None:
        return o.unit_cost.typical.amount
    return _ranked(o.cost, o.spot_risk).typical.amount


def _rank(job: Job, options: list[Option]) -> None:
    """Sort by the objective (ties broken by the other), flag near-ties and the Pareto front."""
    def cost_of(o: Option) -> float:
        return rank_cost(job, o)

    def time_of(o: Option) -> float:
        if getattr(o.spot_risk, "expected_time_s", None) is not None:
            return o.spot_risk.expected_time_s.typical
        if o.time_s is not None:
            return o.time_s.typical
        return -o.rate.typical  # serving and no amount: faster is better

    if job.objective == "time":
        options.sort(key=lambda o: (time_of(o), cost_of(o), o.gpus))
    else:
        options.sort(key=lambda o: (cost_of(o), time_of(o), o.gpus))
    if not options:
        return
    best = options[0]
    for i, o in enumerate(options):
        near = False
        if i > 0:
            if job.objective == "time" and best.time_s is not None and o.time_s is not None:
                near = o.time_s.typical <= best.time_s.typical * (1 + NEAR_TIE)
            elif job.objective == "cost":
                near = cost_of(o) <= cost_of(best) * (1 + NEAR_TIE)
        dominated = any((cost_of(p) <= cost_of(o) and time_of(p) <= time_of(o))
                        and (cost_of(p) < cost_of(o) or time_of(p) < time_of(o))
                        for p in options)
        options[i] = replace(o, near_tie=near, pareto=not dominated)
