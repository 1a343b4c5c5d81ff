"""The recommender: memory decides first, speed second, then price (S27).

Every catalog GPU x 1/2/4/8 (and cluster sizes for pre-training) is tried: the memory estimate
filters, the speed estimate gives a time range, the cheapest matching offer and its billing rule
give a cost range. Options are ranked by the objective; what was excluded keeps its reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from whichgpu.advise.job import MAX_CONCURRENCY, Job
from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import MoneyRange, cheapest_offer, hourly_price
from whichgpu.cost.currency import RateTable, convert
from whichgpu.cost.task import task_cost
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import layout_for, max_concurrency
from whichgpu.estimate.speed import SpeedEstimate, estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.units import Money, Range, format_duration, format_money

COUNTS = (1, 2, 4, 8)
CLUSTER_COUNTS = (16, 32, 64, 128, 256, 512, 1024)
NEAR_TIE = 0.05  # options within 5 % of the best are shown as near-ties


@dataclass(frozen=True)
class Option:
    """One GPU configuration that can run the job, with its offer, time and cost."""

    gpu: GPU
    count: int
    offer: Offer
    price_per_hour: Money  # for all ``count`` GPUs (whole instances), in the job's currency
    time_s: Range | None  # None for open-ended serving
    cost: MoneyRange  # total for the job (serving: per hour)
    memory_bytes: int  # per GPU
    speed: SpeedEstimate
    rate_name: str
    rate: Range
    batch: int = 1
    replicas: int = 1
    notes: tuple[str, ...] = ()
    near_tie: bool = False
    pareto: bool = False

    @property
    def label(self) -> str:
        n = self.count * self.replicas
        return self.gpu.id if n == 1 else f"{n} x {self.gpu.id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu.id, "count": self.count * self.replicas,
            "gpus_per_replica": self.count, "replicas": self.replicas,
            "price_per_hour": self.price_per_hour.to_json(),
            "time_s": self.time_s.to_json() if self.time_s else None,
            "cost": self.cost.to_json(), "memory_bytes": self.memory_bytes,
            "headroom_bytes": self.gpu.usable_memory_bytes - self.memory_bytes,
            "rate": {"name": self.rate_name, **self.rate.to_json()}, "batch": self.batch,
            "bound": self.speed.bound, "confidence": self.speed.confidence,
            "precision": self.speed.precision,
            "offer": {"provider": self.offer.provider, "offer_set": self.offer.offer_set,
                      "spot": self.offer.spot, "billing": self.offer.billing.describe(),
                      "source": self.offer.source, "observed_at": self.offer.observed_at},
            "notes": list(self.notes), "near_tie": self.near_tie, "pareto": self.pareto,
        }


@dataclass(frozen=True)
class Exclusion:
    gpu: GPU
    count: int
    kind: str  # memory, offer, deadline, budget, price, speed
    reason: str
    shortfall: float = 0.0  # how far off (memory: bytes missing per GPU)

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "kind": self.kind,
                "reason": self.reason}


@dataclass
class Recommendation:
    job: Job
    currency: str
    options: list[Option]
    excluded: list[Exclusion]
    explanation: list[str] = field(default_factory=list)
    what_would_change: list[str] = field(default_factory=list)
    closest: str | None = None

    @property
    def best(self) -> Option | None:
        return self.options[0] if self.options else None

    def pareto(self) -> list[Option]:
        return [o for o in self.options if o.pareto]

    def to_json(self) -> dict[str, Any]:
        w = self.job.workload
        return {
            "model": w.model.name, "task": w.task, "quant": w.quant_name,
            "job": {"kind": self.job.kind, "amount": self.job.amount,
                    "objective": self.job.objective},
            "currency": self.currency,
            "options": [o.to_json() for o in self.options],
            "pareto": [o.label for o in self.pareto()],
            "excluded": [e.to_json() for e in self.excluded],
            "explanation": self.explanation,
            "what_would_change": self.what_would_change,
            "closest": self.closest,
        }


def _job_currency(job: Job, offers: list[Offer]) -> str:
    if job.currency:
        return job.currency
    currencies = {o.price_per_hour.currency for o in offers}
    return currencies.pop() if len(currencies) == 1 else "USD"


def _counts(w: Workload) -> tuple[int, ...]:
    return COUNTS + (CLUSTER_COUNTS if w.task in ("pretrain", "full-ft") else ())


def recommend(job: Job, offers: list[Offer], *, catalog: Catalog | None = None,
              rates: RateTable | None = None, profile: Any = None,
              gpus: list[GPU] | None = None, max_gpus: int | None = None) -> Recommendation:
    """Rank every GPU configuration that can run ``job`` on ``offers``; explain the rest.

    ``max_gpus`` limits the configurations to at most that many GPUs (1: single cards).
    """
    catalog = catalog or default_catalog()
    currency = _job_currency(job, offers)
    options: list[Option] = []
    excluded: list[Exclusion] = []
    w = job.workload
    for gpu in gpus or catalog.gpus:
        counts = tuple(c for c in _counts(w) if max_gpus is None or c <= max_gpus)
        gpu_options, gpu_excluded = _evaluate_gpu(job, gpu, offers, currency, rates, profile,
                                                  counts)
        options += gpu_options
        excluded += gpu_excluded
    _rank(job, options)
    rec = Recommendation(job, currency, options, excluded)
    from whichgpu.advise.explain import explain

    explain(rec, offers, catalog, rates)
    return rec


def _evaluate_gpu(job: Job, gpu: GPU, offers, currency, rates, profile, counts):
    """Options for one GPU, or the one reason it has none (the most telling one)."""
    w = job.workload
    opts: list[Option] = []
    misses: list[Exclusion] = []
    memory_miss: Exclusion | None = None
    for count in counts:
        if count > 8 and any(o.count <= 8 for o in opts):
            break  # a cluster only when one server is not enough
        try:
            wl = layout_for(w, count)
        except InputError:
            continue
        batch = 1
        if job.kind in ("tokens", "daily") or job.kind == "serving":
            ctx_w = wl
            cap = job.concurrency or MAX_CONCURRENCY
            batch = max_concurrency(ctx_w, gpu, count, limit=cap)
            if job.concurrency and batch < job.concurrency:
                batch = 0
            if batch == 0:
                need = estimate_memory(wl.with_(batch=job.concurrency or 1)).total_bytes
                memory_miss = memory_miss or _memory_exclusion(gpu, count, need)
                continue
            wl = wl.with_(batch=batch)
        need = estimate_memory(wl).total_bytes
        if need > gpu.usable_memory_bytes and wl.is_diffusion and wl.offload == "none" \
                and wl.task != "image-lora":
            # What ComfyUI and diffusers users do on smaller cards: the text encoders leave
            # the GPU once the prompt is encoded. Same images, a little slower.
            offloaded = wl.with_(offload="model")
            if estimate_memory(offloaded).total_bytes <= gpu.usable_memory_bytes:
                wl = offloaded
                need = estimate_memory(wl).total_bytes
        if need > gpu.usable_memory_bytes:
            if memory_miss is None or count == 1:
                memory_miss = _memory_exclusion(gpu, count, need)
            continue
        offer = cheapest_offer(offers, gpu.id, currency, rates, gpus=count, spot=job.spot)
        if offer is None:
            pricing = "spot" if job.spot else "on-demand"
            misses.append(Exclusion(gpu, count, "offer",
                                    f"fits ({need / 1e9:.1f} GB per GPU) but has no {pricing} "
                                    "offer in the price list"))
            break
        option = _option(job, wl, gpu, count, offer, need, batch, currency, rates, profile)
        if isinstance(option, Exclusion):
            misses.append(option)
            continue
        opts.append(option)
    if opts:
        return opts, []
    if misses:
        return [], [misses[0]]
    if memory_miss is not None:
        return [], [memory_miss]
    return [], []


def _memory_exclusion(gpu: GPU, count: int, need: int) -> Exclusion:
    usable = gpu.usable_memory_bytes
    where = gpu.id if count == 1 else f"{count} x {gpu.id}"
    return Exclusion(gpu, count, "memory",
                     f"does not fit: needs {need / 1e9:.1f} GB per GPU on {where}, "
                     f"has {usable / 1e9:.1f} GB ({(need - usable) / 1e9:.1f} GB short)",
                     need - usable)


def _option(job: Job, wl: Workload, gpu: GPU, count: int, offer: Offer, need: int, batch: int,
            currency: str, rates, profile) -> Option | Exclusion:
    speed = estimate_speed(wl, gpu, count, profile=profile, check_fit=False)
    price = hourly_price(offer, count, currency, rates)
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
            wl.with_(batch=per_replica), gpu, count, profile=profile, check_fit=False)
        while s.rates[rate_name].typical < job.tokens_per_s_each and per_replica > 1:
            replicas *= 2
            per_replica = math.ceil(job.users / replicas)
            s = estimate_speed(wl.with_(batch=per_replica), gpu, count, profile=profile,
                               check_fit=False)
        rate = s.rates[rate_name]
        if rate.typical < job.tokens_per_s_each:
            return Exclusion(gpu, count, "speed",
                             f"too slow: {rate.typical:.0f} tokens/s per user even alone, "
                             f"{job.tokens_per_s_each:g} wanted")
        speed, batch = s, per_replica
        seconds = None
        if replicas > 1:
            notes.append(f"{replicas} replicas of {count} GPU(s), {per_replica} users each")
    elif kind == "images":
        rate_name, rate = "images_per_min", speed.rates["images_per_min"]
        seconds = rate.inverse(job.images * 60)
    elif kind == "videos":
        rate_name = "seconds_per_video"
        per = speed.times["seconds_per_video"]
        rate = per
        seconds = per.scale(job.videos)
    elif kind == "steps":
        rate_name = "step_s"
        per = speed.times["step_s"]
        rate = per
        seconds = per.scale(job.steps)
    elif kind == "train-tokens":
        rate_name, rate = "tokens_per_s", speed.rates["tokens_per_s"]
        seconds = rate.inverse(job.train_tokens)
    else:  # no amount: rank by hourly price, show the speed
        rate_name, rate = next(iter(speed.rates.items()))
        seconds = None
    total_price = price * replicas
    if job.max_price_per_hour is not None:
        cap = convert(job.max_price_per_hour, currency, rates)
        if total_price.amount > cap.amount:
            return Exclusion(gpu, count, "price",
                             f"over budget per hour: {format_money(total_price)}/h > "
                             f"{format_money(cap)}/h")
    if seconds is None:
        cost = MoneyRange(total_price, total_price, total_price)
    else:
        # the billed machine time; a daily volume spread over replicas costs the same GPU-hours
        cost = task_cost(offer, seconds, gpus=count).cost.convert(currency, rates)
        if kind == "daily":
            seconds = seconds.scale(1 / replicas)  # wall time per day
        elif replicas > 1:
            cost = cost.scale(replicas)
    if job.deadline_s is not None and seconds is not None:
        if seconds.typical > job.deadline_s:
            return Exclusion(gpu, count, "deadline",
                             f"misses the deadline: about {format_duration(seconds.typical)} "
                             f"> {format_duration(job.deadline_s)}",
                             seconds.typical - job.deadline_s)
    if job.budget is not None:
        cap = convert(job.budget, currency, rates)
        if cost.typical.amount > cap.amount:
            return Exclusion(gpu, count, "budget",
                             f"over budget: about {format_money(cost.typical)} > "
                             f"{format_money(cap)}")
    notes += [n for n in speed.warnings]
    w = job.workload
    if wl.offload != w.offload:
        notes.append(f"with --offload {wl.offload}: components wait in CPU memory between "
                     "stages (a little slower, same output)")
    qf = wl.quant_format
    if qf.compute in ("fp8", "fp4") and not gpu.supports(qf.compute):
        notes.append(f"no {qf.compute.upper()} on {gpu.id}: {qf.name} weights run through "
                     "16-bit matmuls")
    if w.model.approximate:
        notes.append("generic model from a bare size: approximate")
    return Option(gpu, count, offer, total_price, seconds, cost, need, speed, rate_name, rate,
                  batch, replicas, tuple(notes))


def _rank(job: Job, options: list[Option]) -> None:
    """Sort by the objective (ties broken by the other), flag near-ties and the Pareto front."""
    def cost_of(o: Option) -> float:
        return o.cost.typical.amount

    def time_of(o: Option) -> float:
        if o.time_s is not None:
            return o.time_s.typical
        return -o.rate.typical  # serving: faster per user is better

    if job.objective == "time":
        options.sort(key=lambda o: (time_of(o), cost_of(o), o.count))
    else:
        options.sort(key=lambda o: (cost_of(o), time_of(o), o.count))
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
        options[i] = _replace(o, near_tie=near, pareto=not dominated)


def _replace(o: Option, **changes) -> Option:
    from dataclasses import replace

    return replace(o, **changes)
