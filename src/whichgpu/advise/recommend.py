"""The recommender: memory decides first, speed second, then price (S27).

Every catalog GPU x 1/2/4/8 (and cluster sizes for pre-training) is tried: the memory estimate
filters, the speed estimate gives a time range, and every matching offer is costed under its
own billing rule and instance size; the offer that makes the job cheapest is kept (a lower
hourly price with a one-hour minimum can lose to a dearer per-second offer on a short job).
Options are ranked by the objective; what was excluded keeps its reason, per failing size.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, cast

from whichgpu.advise.job import MAX_CONCURRENCY, Job
from whichgpu.advise.machines import (
    SETUP_SOURCE,
    Machines,
    Spread,
    as_machine,
    link_words,
    machine_setup,
    machines_for,
    sizes_sold,
)
from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import MoneyRange, run_cost_amount, run_cost_range
from whichgpu.cost.currency import RateTable, convert
from whichgpu.errors import InputError
from whichgpu.estimate.calibration import Calibration
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import describe_layout, layout_for, max_concurrency, memory_band
from whichgpu.estimate.speed import SpeedEstimate, estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Duration, Money, Range
from whichgpu.vocabulary import ExclusionKind, Objective, Placement, Ranking, Task, WorkKind

COUNTS = tuple(range(1, 9))  # every count a server holds (fit.COUNTS): 3 x RTX 3090 too
CLUSTER_COUNTS = (16, 32, 64, 128, 256, 512, 1024)
NEAR_TIE = 0.05  # options within 5 % of the best are shown as near-ties
SPREAD_PROVIDERS = 4  # more providers than this for one job: no longer a plan to spread it
SERVER_GPUS = 8  # GPUs in one server (HGX/DGX boards); more than this is a cluster

#: The rates that measure a workload's work, and the unit its cost is quoted per when no
#: amount of work is given: rate name -> (rate units per hour factor, unit label, units quoted).
_WORK_RATES = {
    "tokens_per_s": (3600, msg("unit.train_tokens", "1M training tokens"), 1e6),
    "images_per_min": (60, msg("unit.images", "1,000 images"), 1e3),
    "videos_per_hour": (1, msg("unit.video", "video"), 1),
    "steps_per_s": (3600, msg("unit.steps", "1,000 steps"), 1e3),
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
    notes: tuple[Message, ...] = ()
    near_tie: bool = False
    pareto: bool = False
    layout: str = "single GPU"
    assumptions: tuple[Message, ...] = ()
    unit_cost: MoneyRange | None = None  # no amount given: cost per ``unit`` of work
    unit: Message | None = None
    serving: dict[str, Any] | None = None  # sizing for a request rate (advise/serving.py)
    # spot offers: the expected cost and time with interruptions (advise/spot_risk.py)
    spot_risk: Any = None
    workload: Workload | None = field(default=None, compare=False)  # as run (for --export)
    # the machines rented, as sold (advise/machines.py); None: one machine of the offer
    machines: Machines | None = None
    # more GPUs than one provider is assumed to rent on demand (cost/capacity.py), else None
    over_capacity: Any = None

    @property
    def shape(self) -> Machines:
        """The machines this option rents (one machine of its offer when not set)."""
        if self.machines is not None:
            return self.machines
        return Machines(1, self.offer.gpu_count, self.gpus, self.count, Spread.ONE)

    @property
    def gpus(self) -> int:
        return self.count * self.replicas

    @property
    def label(self) -> Placement:
        return Placement(self.gpu.id, self.gpus)

    @property
    def lacks_fp8(self) -> bool:
        return any(getattr(n, "id", None) == "option.no_fp8" for n in self.notes)

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
            **self.shape.to_json(),
            "offer": {"provider": self.offer.provider, "offer_set": self.offer.offer_set,
                      "gpu_count": self.offer.gpu_count,
                      "instances": self.shape.machines,
                      "spot": self.offer.spot, "billing": self.offer.billing_text(),
                      "region": self.offer.region, "instance_type": self.offer.instance_type,
                      "source": self.offer.source, "observed_at": self.offer.observed_at},
            "pricing": "spot" if self.offer.spot else "on-demand",
            "notes": list(self.notes), "assumptions": list(self.assumptions),
            "near_tie": self.near_tie, "pareto": self.pareto,
            "messages": {"notes": [n.to_json() for n in self.notes],
                         "assumptions": [a.to_json() for a in self.assumptions]},
        }
        if self.unit_cost is not None:
            data["cost_per_unit"] = {"unit": self.unit, **self.unit_cost.to_json(9)}
        if "measured_runs" in self.speed.details:  # the store's runs moved its speed
            data["measured_runs"] = self.speed.details["measured_runs"]
        if self.serving is not None:
            data.update(self.serving)
        if self.over_capacity is not None:
            data["capacity"] = {"gpus_needed": self.shape.paid, "exceeds": True,
                                "ceiling": self.over_capacity.to_json()}
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
    kind: ExclusionKind
    reason: Message
    shortfall: float = 0.0
    gap: float = 0.0
    works_with: int | None = None  # the fewest GPUs of this kind that do run the job
    has_offer: bool = True  # the price list rents this GPU (spot or on-demand as asked)

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.id, "count": self.count, "kind": self.kind,
                "reason": self.reason, "gap": round(self.gap, 6),
                "works_with": self.works_with, "has_offer": self.has_offer,
                "message": self.reason.to_json()}


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
    reason: Message  # the fit in words
    option: Option | None = None  # time and rate (price: the ownership cost, or 0 if unknown)
    missing: tuple[str, ...] = ()  # --gpu-spec keys a speed still needs
    cost_per_hour: Money | None = None  # owning it, per hour of use, all `count` cards
    cost_note: Message | str = ""
    notes: tuple[Message, ...] = ()

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
    explanation: list[Message] = field(default_factory=list)
    what_would_change: list[Message] = field(default_factory=list)
    closest: Message | None = None
    max_gpus: int | None = None
    only: list[str] | None = None  # the GPUs compared when narrowed (catalog ids)
    offered: frozenset[str] = frozenset()  # GPU ids the price list rents (as asked: spot or not)
    owned: list[OwnedOption] = field(default_factory=list)  # your own card, at each count

    @property
    def best(self) -> Option | None:
        return self.options[0] if self.options else None

    @property
    def ranked_by(self) -> Ranking:
        """What the options are sorted by."""
        if self.job.objective == Objective.TIME:
            return Ranking.FASTEST_PER_USER if self.job.per_hour else Ranking.SHORTEST_TIME
        from whichgpu.advise.goodput import ranks_on_goodput  # issue 28

        if ranks_on_goodput(self.job):
            return Ranking.GOODPUT
        if self.job.per_hour or (self.job.kind == WorkKind.NONE and not _unit_ranked(self.job)):
            return Ranking.COST_PER_HOUR
        if self.job.kind == WorkKind.NONE:
            return Ranking.COST_PER_UNIT
        return Ranking.TOTAL_COST

    @property
    def ranking_unit(self) -> Message | None:
        """The unit of work a cost-per-unit ranking is quoted per ('1M training tokens')."""
        if self.ranked_by is not Ranking.COST_PER_UNIT:
            return None
        return next((o.unit for o in self.options if o.unit),
                    msg("unit.work", "unit of work"))

    @property
    def ranking(self) -> Message | Ranking:
        """What the options are sorted by, in words ('cost per 1M training tokens')."""
        unit = self.ranking_unit
        if unit is not None:
            return msg("ranking.per_unit", "cost per {unit}", unit=unit)
        return self.ranked_by

    def pareto(self) -> list[Option]:
        return [o for o in self.options if o.pareto]

    @property
    def understood(self) -> Message:
        """The work the answer understood, in one sentence (advise/understood.py)."""
        from whichgpu.advise.understood import understood

        return understood(self.job)

    def to_json(self) -> dict[str, Any]:
        from whichgpu.advise.collector import paced  # as the answer itself (collector.py)

        with paced():
            return self._json()

    def _json(self) -> dict[str, Any]:
        w = self.job.workload
        return {
            "model": w.model.name, "task": w.task, "quant": w.quant_name,
            "job": {"kind": self.job.kind, "amount": self.job.amount,
                    "objective": self.job.objective},
            "understood": self.understood, "assumptions": _assumed(self.job),
            "ranking": self.ranking,
            "ranked_by": self.ranked_by, "ranking_unit": self.ranking_unit,
            "currency": self.currency,
            "max_gpus": self.max_gpus, "only": self.only,
            "options": [o.to_json() for o in self.options],
            "pareto": [o.label for o in self.pareto()],
            "excluded": [e.to_json() for e in self.excluded],
            "explanation": self.explanation,
            "what_would_change": self.what_would_change,
            "closest": self.closest,
            "owned": [o.to_json() for o in self.owned],
            "messages": {"understood": self.understood.to_json(),
                         "explanation": [m.to_json() for m in self.explanation],
                         "what_would_change": [m.to_json() for m in self.what_would_change]},
        }


def _assumed(job: Job) -> list[dict[str, Any]]:
    from whichgpu.advise.understood import assumed

    return [a.to_json() for a in assumed(job)]


def _unit_ranked(job: Job) -> bool:
    """No amount of work for a job that ends (training, images, videos): the options are
    ranked by what the same work costs (per 1M tokens, per 1,000 images), not by the hour."""
    w = job.workload
    return job.kind == WorkKind.NONE and (w.is_training or w.is_diffusion)


# One recommendation's speeds, by (workload, GPU, count): a size priced on spot and on-demand,
# and batch tokens split into shares, ask for the same speed again. Set for the length of one
# recommend() call only (None outside it), so it never outlives the objects it is keyed by.
_SPEEDS: ContextVar[dict[tuple[int, int, int], tuple[Workload, GPU, SpeedEstimate]] | None] = \
    ContextVar("whichgpu_recommend_speeds", default=None)


def _speed(wl: Workload, gpu: GPU, count: int, profile) -> SpeedEstimate:
    """``estimate_speed`` for ranking (no fit check, no saturation search), remembered for
    the recommendation under way (the same workload object on the same GPU object)."""
    memo = _SPEEDS.get()
    if memo is None:
        return estimate_speed(wl, gpu, count, profile=profile, check_fit=False,
                              saturation=False)
    key = (id(wl), id(gpu), count)
    hit = memo.get(key)
    if hit is not None and hit[0] is wl and hit[1] is gpu:
        return hit[2]
    speed = estimate_speed(wl, gpu, count, profile=profile, check_fit=False, saturation=False)
    memo[key] = (wl, gpu, speed)
    return speed


# One recommendation's offers by (GPU id, spot), in the price list's order: each GPU's pool
# is looked up instead of filtered from the whole list once per GPU. Set for the length of
# one recommend() call only, like _SPEEDS (the list is held, so its id is not reused).
_POOLS: ContextVar[dict[int, tuple[list[Offer], dict[tuple[str, bool], list[Offer]]]] | None] = \
    ContextVar("whichgpu_recommend_pools", default=None)


def _offers_of(offers: list[Offer], gpu_id: str, spot: bool) -> list[Offer]:
    """The offers of ``gpu_id`` on spot (or on-demand), in the list's order (a new list)."""
    memo = _POOLS.get()
    if memo is None:
        return [o for o in offers if o.gpu == gpu_id and o.spot == spot]
    hit = memo.get(id(offers))
    if hit is None or hit[0] is not offers:
        grouped: dict[tuple[str, bool], list[Offer]] = {}
        for o in offers:
            grouped.setdefault((o.gpu, o.spot), []).append(o)
        hit = memo[id(offers)] = (offers, grouped)
    return list(hit[1].get((gpu_id, spot), ()))


def _job_currency(job: Job, offers: list[Offer]) -> str:
    if job.currency:
        return job.currency
    currencies = {o.price_per_hour.currency for o in offers}
    return currencies.pop() if len(currencies) == 1 else "USD"


def _counts(w: Workload) -> tuple[int, ...]:
    return COUNTS + (CLUSTER_COUNTS if w.task in (Task.PRETRAIN, Task.FULL_FT) else ())


def recommend(job: Job, offers: list[Offer], *, catalog: Catalog | None = None,
              rates: RateTable | None = None, profile: Calibration | None = None,
              gpus: list[GPU] | None = None, max_gpus: int | None = None,
              owned: GPU | None = None, owned_count: int = 1) -> Recommendation:
    """Rank every GPU configuration that can run ``job`` on ``offers``; explain the rest.

    ``gpus`` narrows the GPUs compared (``--only``); ``max_gpus`` limits a configuration to at
    most that many GPUs in all, replicas included (1: single cards). ``owned`` is the user's
    own card (``owned_count`` of them): evaluated at every count up to that which its layout
    allows, as owned hardware (no rental price), beside the ranked rentals.
    """
    if max_gpus is not None and (isinstance(max_gpus, bool) or int(max_gpus) < 1):
        raise InputError(msg("recommend.max_gpus", "{flag} must be at least 1, got {n}",
                             flag=Field("max_gpus"), n=max_gpus))
    from whichgpu.advise.collector import paced  # fewer collections during the answer

    with paced():
        return _recommend_paced(job, offers, catalog, rates, profile, gpus, max_gpus, owned,
                                owned_count)


def _recommend_paced(job: Job, offers: list[Offer], catalog: Catalog | None,
                     rates: RateTable | None, profile: Calibration | None,
                     gpus: list[GPU] | None, max_gpus: int | None, owned: GPU | None,
                     owned_count: int) -> Recommendation:
    if job.kind == WorkKind.RATE:  # replicas x TP for a request rate and latency targets
        from whichgpu.advise.serving import recommend_for_rate

        return _flag_capacity(recommend_for_rate(job, offers, catalog=catalog, rates=rates,
                                                 profile=profile, gpus=gpus,
                                                 max_gpus=max_gpus))
    token = _SPEEDS.set({})
    pools = _POOLS.set({})
    try:
        return _recommend(job, offers, catalog, rates, profile, gpus, max_gpus, owned,
                          owned_count)
    finally:
        _POOLS.reset(pools)
        _SPEEDS.reset(token)


def _recommend(job: Job, offers: list[Offer], catalog: Catalog | None, rates: RateTable | None,
               profile: Calibration | None, gpus: list[GPU] | None, max_gpus: int | None,
               owned: GPU | None, owned_count: int) -> Recommendation:
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
    return _flag_capacity(rec)


def _flag_capacity(rec: Recommendation) -> Recommendation:
    """Flag options that need more GPUs of one kind from one provider than it is assumed to
    rent on demand (cost/capacity.py); when the best one does, say so second in the
    explanation, with the number and the assumption."""
    from whichgpu.cost.capacity import ceiling

    for i, o in enumerate(rec.options):
        c = ceiling(o.offer.provider)
        m = o.shape
        if m.paid <= c.gpus:
            continue
        note = msg("option.capacity", "needs {gpus:,} GPUs ({machines:,} machines) from "
                   "{provider}: more than the {ceiling:,} GPUs of one kind one provider is "
                   "assumed to rent on demand ({source})", gpus=m.paid, machines=m.machines,
                   provider=o.offer.provider, ceiling=c.gpus, source=c.source)
        rec.options[i] = replace(o, notes=(*o.notes, note), over_capacity=c)
    best = rec.best
    if best is not None and best.over_capacity is not None:
        c = best.over_capacity
        providers = max(2, math.ceil(best.shape.paid / c.gpus))
        said = dict(machines=best.shape.machines, gpus=best.shape.paid, gpu=best.gpu.id,
                    provider=best.offer.provider, ceiling=c.gpus, source=c.source,
                    providers=providers)
        rec.explanation.insert(1, msg(
            "explain.capacity", "It needs {machines:,} machines ({gpus:,} x {gpu}) from "
            "{provider}: no single provider is known to rent that many on demand (assumed at "
            "most {ceiling:,} GPUs of one kind per provider: {source}). Spread it over at least "
            "{providers} providers, or reserve the capacity in advance.", **said)
            if providers <= SPREAD_PROVIDERS else msg(
            "explain.capacity.none", "It needs {machines:,} machines ({gpus:,} x {gpu}) from "
            "{provider}: no provider is known to rent that many on demand (assumed at most "
            "{ceiling:,} GPUs of one kind per provider: {source}), and it would take "
            "{providers:,} providers at that ceiling. Reserve the capacity in advance, or "
            "ask for less.", **said))
    return rec


def owned_options(job: Job, gpu: GPU, count: int, currency: str,
                  rates: RateTable | None = None,
                  profile: Calibration | None = None) -> list[OwnedOption]:
    """Your card at each count from 1 to ``count`` that the layout allows: fit, speed and
    the cost of owning it (never a rental price)."""
    from whichgpu.catalog.billing import BillingRule
    from whichgpu.catalog.user_gpu import missing_for_speed
    from whichgpu.estimate.memory.fit import counts_for
    from whichgpu.estimate.platform import EngineUnavailable, engine_for

    if isinstance(count, bool) or int(count) < 1:
        raise InputError(msg("recommend.count", "{flag} must be at least 1, got {n}",
                             flag=Field("count"), n=count))
    per_card, cost_note = _ownership_per_hour(gpu, currency, rates)
    out: list[OwnedOption] = []
    try:
        w, engine_note = engine_for(job.workload, gpu)
    except EngineUnavailable as exc:
        return [OwnedOption(gpu, 1, False, 0, exc.message)]
    notes = (engine_note,) if engine_note else ()
    usable = gpu.usable_memory_bytes
    for n in counts_for(w, count):
        wl = layout_for(w, n)
        batch = 1
        if job.kind in (WorkKind.TOKENS, WorkKind.DAILY, WorkKind.SERVING):
            batch = max(1, max_concurrency(wl, gpu, n, limit=job.concurrency or MAX_CONCURRENCY))
            wl = wl.with_(batch=batch)
        wl, need = _fit(wl, w, usable)
        if need > usable:
            out.append(OwnedOption(gpu, n, False, need, _memory_exclusion(gpu, n, need).reason,
                                   notes=notes))
            continue
        reason = msg("owned.fits", "fits: {need:.1f} GB per GPU on {where}, {usable:.1f} GB "
                     "usable", need=need / 1e9, where=Placement(gpu.id, n), usable=usable / 1e9)
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
            out.append(OwnedOption(gpu, n, True, need, msg(
                "owned.fits_but", "{fits}; {reason}", fits=reason, reason=option.reason),
                cost_note=cost_note, notes=notes))
            continue
        out.append(OwnedOption(gpu, n, True, need, reason, option=option,
                               cost_per_hour=price if per_card is not None else None,
                               cost_note=cost_note,
                               notes=notes + tuple(x for x in option.notes if x not in notes)))
    return out


def _ownership_per_hour(gpu: GPU, currency: str, rates: RateTable | None,
                        ) -> tuple[Money | None, Message]:
    """What owning one card costs per hour of use (S9's defaults: 3 years, 60 % use,
    $0.10/kWh), and how that was reached or what it lacks."""
    from whichgpu.cost.ownership import ownership, ownership_inputs

    try:
        inputs = ownership_inputs(gpu, rates=rates, currency=currency)
    except InputError as exc:
        why = exc.args[0] if exc.args else str(exc)
        if gpu.purchase_price is None:
            return None, msg("owned.no_price", "owned: no rental price, and no cost of owning "
                             "it without its purchase price ({spec}); {why}",
                             spec=Field("gpu_spec", "price=329USD"), why=why)
        return None, msg("owned.no_power", "owned: no rental price, and no cost of owning it "
                         "without its power ({spec}); {why}", spec=Field("gpu_spec", "tdp=170W"),
                         why=why)
    o = ownership(inputs, rates)
    per_hour = convert(o.effective_cost_per_used_hour, currency, rates)
    return per_hour, msg("owned.cost", "owned: no rental price; owning it costs about {cost} "
                         "per hour of use ({years:g} years, {use:.0%} use, electricity at "
                         "{kwh}/kWh: 'whichgpu tco' takes every input)", cost=per_hour,
                         years=inputs.years, use=inputs.utilization, kwh=inputs.kwh_price)


def _note_no_offload(rec: Recommendation) -> None:
    """Say once why cards too small were not tried with weights in host RAM."""
    from whichgpu.estimate.memory.offload_plan import no_offload_reason

    w = rec.job.workload
    why = no_offload_reason(w)
    if why and any(e.kind == ExclusionKind.MEMORY and e.count == 1 for e in rec.excluded):
        rec.explanation.append(msg("explain.no_offload", "Cards too small for the whole model "
                                   "were not tried with part of it in host RAM: {why}.",
                                   why=why))


def _evaluate_gpu(job: Job, gpu: GPU, offers, currency, rates, profile, counts, max_gpus):
    """Options for one GPU, and the sizes of it that fail: every failing size below the
    smallest that works, or (when no size works) the nearest miss."""
    from whichgpu.estimate.platform import EngineUnavailable, engine_for

    try:
        w, engine_note = engine_for(job.workload, gpu)
    except EngineUnavailable as exc:  # the engine the user named does not run on this card
        return [], [Exclusion(gpu, 1, ExclusionKind.ENGINE, exc.why,
                              has_offer=any(o.gpu == gpu.id for o in offers))]
    if engine_note:
        job = replace(job, workload=w)
    # --spot prices each size on spot (by its expected cost) and on-demand, so that on-demand
    # can win a job too long or too little checkpointed for interruptible capacity
    pools = [_offers_of(offers, gpu.id, spot) for spot in ((True, False) if job.spot
                                                          else (False,))]
    pools = [p for p in pools if p]
    pool = [o for p in pools for o in p]
    usable = gpu.usable_memory_bytes
    opts: list[Option] = []
    misses: list[Exclusion] = []
    for count in counts:
        if count > SERVER_GPUS and w.task != Task.PRETRAIN and \
                any(o.count <= SERVER_GPUS for o in opts):
            break  # a cluster only when one server is not enough (pre-training: always, S5)
        try:
            wl = layout_for(w, count)
        except InputError:
            continue
        wl, spilled = _with_offload(wl, gpu, count)
        if spilled is not None and not spilled.host_ok:
            host = spilled.memory.host
            misses.append(_memory_exclusion(
                gpu, count, estimate_memory(layout_for(w, count)).total_bytes, bool(pool),
                [msg("exclusion.host_ram", "with llama.cpp offload ({flags}) it needs "
                     "{host:.1f} GB of host RAM, more than the {free:.0f} GB free ({flag})",
                     flags=spilled.flags, host=spilled.host_bytes / 1e9,
                     free=(host.usable_ram_bytes if host else 0) / 1e9,
                     flag=Field("host_ram"))]))
            continue
        batch = 1
        if job.kind in (WorkKind.TOKENS, WorkKind.DAILY, WorkKind.SERVING):
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
            fits = dict(need=need / 1e9, where=Placement(gpu.id, count), buy=_to_buy(gpu))
            why = (msg("exclusion.offer.spot", "fits ({need:.1f} GB per GPU on {where}) but the "
                       "price list has no spot offer for it{buy}", **fits) if job.spot else
                   msg("exclusion.offer", "fits ({need:.1f} GB per GPU on {where}) but the "
                       "price list has no on-demand offer for it{buy}", **fits))
            misses.append(Exclusion(gpu, count, ExclusionKind.OFFER, why, has_offer=False))
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
    if job.kind == WorkKind.TOKENS and opts:
        opts = _token_shares(job, gpu, opts, pools, counts, currency, rates, profile,
                             max_gpus, engine_note)
    if opts:
        fewest = min(o.count for o in opts)
        return opts, [replace(m, works_with=fewest) for m in misses if m.count < fewest]
    if misses:
        return [], [min(misses, key=lambda m: (m.gap, m.count))]
    return [], []


def _token_shares(job: Job, gpu: GPU, opts: list[Option], pools, counts, currency, rates,
                  profile, max_gpus, engine_note) -> list[Option]:
    """Batch tokens split into independent shares (issue 26): N GPUs as N/k separate machines
    of k, k the fewest GPUs that hold the model, each running its share of the prompts. Such
    an option takes the place of N GPUs working together where it ranks better."""
    out = list(opts)
    for pool in pools:
        own = [o for o in opts if o.offer.spot == pool[0].spot and o.workload is not None]
        if not own:
            continue
        base = min(own, key=lambda o: o.count)
        assert base.workload is not None  # kept above
        for n in counts:
            if n <= base.count or n % base.count or n > SERVER_GPUS:
                continue
            got = _option(job, base.workload, gpu, base.count, pool, base.memory_bytes,
                          base.batch, currency, rates, profile, max_gpus,
                          split=n // base.count)
            if isinstance(got, Exclusion):
                continue
            if engine_note:
                got = replace(got, notes=(engine_note, *got.notes))
            rival = next((o for o in out if o.offer.spot == pool[0].spot and o.gpus == n),
                         None)
            if rival is None:
                out.append(got)
            elif _rank_key(job, got) < _rank_key(job, rival):
                out[out.index(rival)] = got
    return out


def _rank_key(job: Job, o: Option) -> tuple[float, float]:
    """What the ranking sorts one option by: (cost, time), or (time, cost) for time."""
    cost, time = rank_cost(job, o), _time_of(o)
    return (time, cost) if job.objective == "time" else (cost, time)


def _time_of(o: Option) -> float:
    if getattr(o.spot_risk, "expected_time_s", None) is not None:
        return o.spot_risk.expected_time_s.typical
    if o.time_s is not None:
        return o.time_s.typical
    return -o.rate.typical  # serving and no amount: faster is better


def evaluate(job: Job, gpu: GPU, count: int, offers: list[Offer], currency: str, *,
             rates: RateTable | None = None, profile: Any = None,
             max_gpus: int | None = None) -> Option | Exclusion | None:
    """One GPU size for ``job`` (used to test what a change to the job would do)."""
    if job.kind == WorkKind.RATE:
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
    # diffusion: the pipeline split over the GPUs (tensor parallel), model offload (text
    # encoders leave the GPU once the prompt is encoded), tiled VAE decode (ComfyUI retries a
    # decode tiled; diffusers users call vae.enable_tiling()), weights streamed in
    from whichgpu.estimate.diffusion_parallel import tries as diffusion_tries

    tries = diffusion_tries(wl, asked, streamed=False)
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


def _adapted(wl: Workload, asked: Workload) -> list[Message]:
    """The adaptations ``_fit`` made, in words."""
    out = []
    if wl.offload != asked.offload:
        out.append(msg("adapted.offload", "with {flag}", flag=Field("offload", wl.offload)))
    if wl.is_diffusion and wl.tp and not asked.tp:
        out.append(msg("adapted.diffusion_tp", "split over {n} GPUs by tensor parallelism "
                       "({flag})", n=wl.tp, flag=Field("engine", wl.engine_name)))
    if wl.uses_checkpointing and not asked.uses_checkpointing:
        out.append(msg("adapted.checkpointing", "with gradient checkpointing"))
    if wl.vae_tiling and not asked.vae_tiling:
        out.append(msg("adapted.vae_tiling", "with {flag}", flag=Field("vae_tiling")))
    return out


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


def _main_rate(speed: SpeedEstimate) -> str:
    for name in _WORK_RATES:
        if name in speed.rates:
            return name
    return next(iter(speed.rates))


def _layout(wl: Workload, replicas: int) -> Message:
    """How the GPUs are used: 'single GPU', 'tp=4', 'dp=64 ZeRO-3', '2 replicas of 2 GPUs'."""
    base = describe_layout(wl)
    if replicas == 1:
        return base
    if wl.gpus == 1:
        return msg("layout.replicas.one", "{n} replicas of 1 GPU", n=replicas)
    return msg("layout.replicas", "{n} replicas of {gpus} GPUs, {layout}", n=replicas,
               gpus=wl.gpus, layout=base)


def _assumptions(offer: Offer, m: Machines, gpu: GPU) -> list[Message]:
    """What renting ``m`` machines of ``offer`` assumes (the machine as sold, its links, GPUs
    paid for and not used, several machines, clusters)."""
    out = []
    machine = dict(provider=offer.provider, size=offer.gpu_count,
                   instance=f" ({offer.instance_type})" if offer.instance_type else "")
    if m.sized_as_asked:
        out.append(msg("assume.machine.per_gpu", "{provider} gives a price per GPU, not the "
                       "machines it sells: assumed one {size}-GPU machine at {size} x that "
                       "price", **machine))
    if m.spread is Spread.CLUSTER:
        out.append(msg("assume.cluster.machines", "{n} machines of {size} GPUs from "
                       "{provider}{instance}, linked by a cluster network: the price list "
                       "does not say such a cluster can be rented; large clusters are "
                       "usually reserved in advance, at other prices", n=m.machines, **machine))
    elif m.linked > 1:
        out.append(msg("assume.machine.linked", "the {linked} GPUs that work together are in "
                       "one {size}-GPU machine of {provider}{instance}, linked by its "
                       "{link} (the speed assumes these links)", linked=m.linked,
                       link=link_words(gpu), **machine))
    if m.spread is Spread.SEPARATE:
        out.append(msg("assume.machines.separate", "{n} separate {size}-GPU machines of "
                       "{provider}: the work splits into independent parts, each machine "
                       "runs its share, nothing links them", n=m.machines, **machine))
    if m.paid > m.used:
        out.append(msg("assume.machines.paid", "{provider} rents {gpu} in {size}-GPU "
                       "machines: {paid} GPUs paid for, {used} used", gpu=gpu.id,
                       paid=m.paid, used=m.used, **machine))
    return out


#: Work out the low and high cost of the cheapest on-demand offer only (off: of every offer,
#: as tests/advise/test_cost_range_deferred.py compares)
_DEFER_RANGES = [True]


def _alone_fastest(wl: Workload, profile) -> bool:
    """Whether one sequence alone decodes at least as fast as each sequence of any batch
    (``decode_tokens_per_s_per_sequence`` never rises with the batch), so that the serving
    replica search may ask the speed at one user per replica first.

    ``estimate_speed`` gives that rate as ``1 / decode_step(w, hw, batch, ctx).seconds`` (its
    band's typical is the value itself), on a layout, engine and lengths that do not depend
    on the batch (``layout_for``, ``engine_for``, ``inference_lengths``). Every term of a
    decode step (estimate/speed/llm.py) grows with the batch or stays: the weights streamed
    (dense: the same bytes; MoE: the experts the batch routes to, a count that only grows;
    llama.cpp with parts in host RAM: the GPU and host shares of those bytes each grow, the
    device switches stay), the KV read (x batch), the matmuls (x batch), the tensor-parallel
    all-reduces and pipeline hops (latency + bytes x batch), the fixed overhead. So the step
    time never falls and the per-sequence rate never rises. Not covered, so not assumed:
    a drafter (tokens accepted per step vary with the batch), LoRA adapters, expert
    parallelism's own step, measured runs that move a rate.
    tests/advise/test_serving_alone_fastest.py checks the property over the catalog."""
    return (wl.speculative is None and not wl.lora_adapters and not wl.expert_parallel
            and getattr(profile, "measured_runs", None) is None)


def _given(amount: float | None) -> float:
    """The job's amount for its kind (``Job.kind`` is the kind whose amount is set)."""
    assert amount is not None
    return amount


def _option(job: Job, wl: Workload, gpu: GPU, count: int, pool: list[Offer], need: int,
            batch: int, currency: str, rates, profile, max_gpus, split: int = 1
            ) -> Option | Exclusion:
    """One size of one GPU priced on ``pool``; ``split`` > 1 (batch tokens): that many
    independent shares, each on its own machine of ``count`` GPUs."""
    kind = job.kind
    # serving: the speed at the batch that fits is wanted only when the users per replica
    # are that batch (otherwise the speed at the users per replica replaces it, below)
    speed: SpeedEstimate = (cast(SpeedEstimate, None) if kind == WorkKind.SERVING else
                            _speed(wl, gpu, count, profile))
    notes: list[Message] = []
    replicas = 1
    setup = None
    if kind == WorkKind.TOKENS:
        rate_name, rate = "output_tokens_per_s", speed.rates["output_tokens_per_s"]
        seconds = rate.inverse(_given(job.tokens) / split)
        if split > 1:  # independent prompts: shares on separate machines of `count` GPUs
            replicas = split
            rate = rate.scale(split)  # all the shares' tokens per second
            pool = [o for o in pool if as_machine(o, wl, count).gpu_count == count]
            setup = machine_setup(wl)
            notes.append(msg("option.token_shares", "{n} independent shares of {tokens:,.0f} "
                             "tokens, each on its own {count}-GPU machine (prompts of a batch "
                             "need no link between machines)", n=split, count=count,
                             tokens=_given(job.tokens) / split))
    elif kind == WorkKind.DAILY:
        rate_name, rate = "output_tokens_per_s", speed.rates["output_tokens_per_s"]
        seconds = rate.inverse(_given(job.tokens_per_day))
        replicas = max(1, math.ceil(seconds.typical / 86400))
        if replicas > 1:
            notes.append(msg("option.daily_replicas", "{n} replicas to finish the daily volume "
                             "within 24 h", n=replicas))
    elif kind == WorkKind.SERVING:
        rate_name = "decode_tokens_per_s_per_sequence"
        users, each = _given(job.users), _given(job.tokens_per_s_each)
        replicas = max(1, math.ceil(users / max(batch, 1)))
        per_replica = math.ceil(users / replicas)
        s = _speed(wl, gpu, count, profile) if per_replica == batch else estimate_speed(
            wl.with_(batch=per_replica), gpu, count, profile=profile, check_fit=False,
            saturation=False)
        if s.rates[rate_name].typical < each and per_replica > 1 and _alone_fastest(wl,
                                                                                  profile):
            # the doubling below ends at one user per replica (the speed it would reach
            # last): when even that is too slow, no replica count is fast enough
            alone = estimate_speed(wl.with_(batch=1), gpu, count, profile=profile,
                                   check_fit=False, saturation=False)
            if alone.rates[rate_name].typical < each:
                s, per_replica = alone, 1
        while s.rates[rate_name].typical < each and per_replica > 1:
            replicas *= 2
            per_replica = math.ceil(users / replicas)
            s = estimate_speed(wl.with_(batch=per_replica), gpu, count, profile=profile,
                               check_fit=False, saturation=False)
        rate = s.rates[rate_name]
        if rate.typical < each:
            missing = each - rate.typical
            return Exclusion(gpu, count, ExclusionKind.SPEED, msg(
                "exclusion.speed", "too slow: {rate:.3g} tokens/s per user even alone, "
                "{wanted:g} wanted", rate=rate.typical, wanted=job.tokens_per_s_each),
                missing, missing / each)
        speed, batch = s, per_replica
        seconds = None
        if replicas > 1:
            notes.append(msg("option.serving_replicas", "{n} replicas of {count} GPU(s), "
                             "{users} users each", n=replicas, count=count, users=per_replica))
    elif kind == WorkKind.IMAGES:
        rate_name, rate = "images_per_min", speed.rates["images_per_min"]
        seconds = rate.inverse(_given(job.images) * 60)
    elif kind == WorkKind.VIDEOS:
        rate_name = "seconds_per_video"
        rate = speed.times["seconds_per_video"]
        seconds = rate.scale(_given(job.videos))
    elif kind == WorkKind.STEPS:
        rate_name = "step_s"
        rate = speed.times["step_s"]
        seconds = rate.scale(_given(job.steps))
    elif kind == WorkKind.TRAIN_TOKENS:
        rate_name, rate = "tokens_per_s", speed.rates["tokens_per_s"]
        seconds = rate.inverse(_given(job.train_tokens))
    else:  # no amount: cost per hour, and per unit of work
        rate_name = _main_rate(speed)
        rate = speed.rates[rate_name]
        seconds = None
    if max_gpus is not None and count * replicas > max_gpus:
        what = (msg("exclusion.for.daily", "the daily volume") if kind == WorkKind.DAILY else
                msg("exclusion.for.users", "{n} users", n=job.users))
        return Exclusion(gpu, count, ExclusionKind.SPEED, msg(
            "exclusion.max_gpus", "needs {n} replicas of {count} ({gpus} GPUs) for {what}, more "
            "than {flag}", n=replicas, count=count, gpus=count * replicas, what=what,
            flag=Field("max_gpus", max_gpus)),
            count * replicas - max_gpus, count * replicas / max_gpus - 1)

    # every offer whose machine holds the GPUs that must be linked, costed under its own
    # billing rule for the machines it takes (advise/machines.py)
    shaped = [got for o in pool if (got := machines_for(o, wl, count, replicas)) is not None]
    if not shaped:
        if split > 1:
            return Exclusion(gpu, count * split, ExclusionKind.OFFER, msg(
                "exclusion.no_share_machine", "no {count}-GPU machine of {gpu} to run a share "
                "on", count=count, gpu=gpu.id), has_offer=True)
        return _machine_exclusion(gpu, count, replicas, need, pool, wl)
    # each machine runs for the wall time (a daily volume: its share of the day)
    wall = seconds.scale(1 / replicas) if kind == WorkKind.DAILY and seconds is not None \
        else seconds
    priced = []
    machines_of = {}
    ranked: dict[int, float] = {}  # on-demand offers: the typical cost alone, range deferred
    # (durations run_cost refuses are left to the full path, which says so for every offer)
    defer = _DEFER_RANGES[0] and wall is not None and all(
        0 <= d < math.inf for d in (wall.low, wall.typical, wall.high))
    for offer, m in shaped:
        price = convert(offer.price_per_hour, currency, rates) * m.machines
        cost: MoneyRange | None
        if wall is None:
            cost = MoneyRange(price, price, price)
        elif defer and not offer.spot and (setup is None or m.machines == 1):
            # what the range below would rank it by (its typical end, by the same
            # operations); the low and high ends are worked out for the cheapest offer only
            ranked[id(offer)] = (convert(run_cost_amount(offer, wall.typical), currency,
                                         rates) * m.machines).amount
            cost = None
        elif setup is not None and m.machines > 1:
            # each machine past the first also boots and loads the weights (billed)
            first = run_cost_range(offer, wall).convert(currency, rates)
            more = run_cost_range(offer, Range(wall.low + setup.low, wall.typical
                                               + setup.typical, wall.high + setup.high))
            cost = first.plus(more.convert(currency, rates).scale(m.machines - 1))
        else:
            cost = run_cost_range(offer, wall).convert(currency, rates).scale(m.machines)
        machines_of[id(offer)] = m
        priced.append((offer, price, cost, _spot(job, wl, offer, count, replicas, wall,
                                                 speed, price, rates, m)))
    if job.max_price_per_hour is not None:
        cap = convert(job.max_price_per_hour, currency, rates)
        within = [p for p in priced if p[1].amount <= cap.amount]
        if not within:
            cheapest = min(p[1] for p in priced)
            return Exclusion(gpu, count, ExclusionKind.PRICE, msg(
                "exclusion.price", "over budget per hour: {price}/h > {cap}/h", price=cheapest,
                cap=cap), cheapest.amount - cap.amount, cheapest.amount / cap.amount - 1)
        priced = within

    def rank_amount(p) -> float:
        got = ranked.get(id(p[0]))
        return got if got is not None else _ranked(p[2], p[3]).typical.amount

    offer, price, cost, risk = min(priced, key=lambda p: (rank_amount(p), p[1].amount,
                                                          p[0].provider))
    if cost is None:  # the range of the cheapest on-demand offer, as every offer had it
        assert wall is not None
        cost = run_cost_range(offer, wall).convert(currency, rates).scale(
            machines_of[id(offer)].machines)
    if kind == WorkKind.DAILY and seconds is not None:
        seconds = seconds.scale(1 / replicas)  # wall time per day
    if job.deadline_s is not None and seconds is not None:
        if seconds.typical > job.deadline_s:
            late = seconds.typical - job.deadline_s
            return Exclusion(gpu, count, ExclusionKind.DEADLINE, msg(
                "exclusion.deadline", "misses the deadline: about {time} > {deadline}",
                time=Duration(seconds.typical), deadline=Duration(job.deadline_s)), late,
                late / job.deadline_s)
    if job.budget is not None:
        cap = convert(job.budget, currency, rates)
        if _ranked(cost, risk).typical.amount > cap.amount:
            return Exclusion(gpu, count, ExclusionKind.BUDGET, msg(
                "exclusion.budget", "over budget: about {cost} > {cap}", cost=cost.typical,
                cap=cap), cost.typical.amount - cap.amount,
                cost.typical.amount / cap.amount - 1)
    unit_cost = unit = None
    if _unit_ranked(job) and rate_name in _WORK_RATES and rate.low > 0:
        per_hour, unit, per = _WORK_RATES[rate_name]
        unit_cost = MoneyRange(*(price * (per / (r * per_hour))
                                 for r in (rate.high, rate.typical, rate.low)))
    notes += list(speed.warnings)
    measured = speed.details.get("measured_runs", {}).get("rates", {}).get(rate_name)
    if measured:  # the store's runs moved the rate this option is priced by (runs add)
        ids = [r["id"] for r in measured["runs"]]
        notes.append(msg("option.measured_runs", "speed {summary}: runs {ids}",
                         summary=msg("runs.summary", "from {n} run(s) of this store",
                                     n=len(ids)), ids=", ".join(f"#{i}" for i in ids)))
    w = job.workload
    if wl.offload != w.offload:
        notes.append(msg("option.offload", "with {flag}: components wait in CPU memory between "
                         "stages (a little slower, same output)",
                         flag=Field("offload", wl.offload)))
    if wl.is_diffusion and wl.tp and not w.tp:
        notes.append(msg("option.diffusion_tp", "one pipeline split over {n} GPUs by tensor "
                         "parallelism ({flag}): the diffusion model's weights divided, two "
                         "all-reduces per block over the GPUs' link",
                         n=wl.tp, flag=Field("engine", wl.engine_name)))
    if wl.uses_checkpointing and not w.uses_checkpointing:
        notes.append(msg("option.checkpointing", "with gradient checkpointing (activations "
                         "recomputed in the backward pass: the same training, about a third "
                         "more compute)"))
    if wl.vae_tiling and not w.vae_tiling:
        notes.append(msg("option.vae_tiling", "with {flag}: the VAE decodes overlapping tiles "
                         "(the peak of a large image or video falls; the decode takes longer)",
                         flag=Field("vae_tiling")))
    if wl.offload_requested and not w.offload_requested:
        est = estimate_memory(wl)
        place = est.details.get("placement") or {}
        on_host: list[Message] = []
        if place.get("host_expert_layers"):
            on_host.append(msg("option.host.experts", "the experts of {n} layer(s)",
                               n=place["host_expert_layers"]))
        if place.get("cpu_layers"):
            on_host.append(msg("option.host.layers", "{n} layer(s)", n=place["cpu_layers"]))
        decode = speed.rates.get("decode_tokens_per_s_per_sequence")
        rate_text = (msg("option.host.rate", ", about {rate:,.0f} tokens/s per sequence",
                         rate=decode.typical) if decode else "")
        notes.append(msg("option.host", "{where} + {what} in host RAM ({flags}; needs "
                         "{ram:.1f} GB of RAM){rate}", where=Placement(gpu.id, count),
                         what=Join(on_host, " and "), flags=place.get("flags", ""),
                         ram=est.host_total_bytes / 1e9, rate=rate_text))
    qf = wl.quant_format
    if qf.compute in ("fp8", "fp4") and not gpu.supports(qf.compute):
        notes.append(msg("option.no_fp8", "no {unit} on {gpu}: {quant} weights run through "
                         "16-bit matmuls", unit=qf.compute.upper(), gpu=gpu.id, quant=qf.name))
    if w.model.approximate:
        notes.append(msg("option.approximate", "generic model from a bare size: approximate"))
    band = memory_band(wl)
    floor = need
    if gpu.usable_memory_bytes - need <= band * gpu.usable_memory_bytes and batch > 1 \
            and not job.concurrency:
        # the batch is ours, as many sequences as fit: less free memory than estimated makes
        # the engine run fewer at once (slower), it does not fail; what must fit is one
        floor = estimate_memory(wl.with_(batch=1)).total_bytes
    if gpu.usable_memory_bytes - floor <= band * gpu.usable_memory_bytes:
        notes.append(msg("option.borderline", "borderline fit: {need:.1f} GB of {usable:.1f} GB "
                         "is within the memory estimate's {band:.0%} uncertainty of the card",
                         need=floor / 1e9, usable=gpu.usable_memory_bytes / 1e9, band=band))
    if offer.spot and risk is None and seconds is None and not job.per_hour:
        notes.append(msg("option.spot_without_amount", "spot: give the amount of work ({flags} "
                         "...) for its expected cost with interruptions; ranked here at its "
                         "price", flags=Join(Field(n) for n in ("steps", "images", "tokens"))))
    said = []
    if setup is not None and machines_of[id(offer)].machines > 1:
        said.append(msg("assume.machines.setup", "each of the {n} machine(s) past the first "
                        "boots, sets up and loads the weights before its share: {time} billed "
                        "each, at the same time as the first (whose setup no option counts; a "
                        "spot restart's times, {source})",
                        n=machines_of[id(offer)].machines - 1,
                        time=Duration(setup.typical), source=SETUP_SOURCE))
    return Option(gpu, count, offer, price, seconds, cost, need, speed, rate_name, rate,
                  batch, replicas, tuple(notes), layout=_layout(wl, replicas),
                  assumptions=tuple(_assumptions(offer, machines_of[id(offer)], gpu))
                  + tuple(said) + (tuple(risk.assumptions) if risk is not None else ()),
                  unit_cost=unit_cost, unit=unit, spot_risk=risk, workload=wl,
                  machines=machines_of[id(offer)])


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


def _spot(job: Job, wl: Workload, offer: Offer, count: int, replicas: int, wall,
          speed: SpeedEstimate, price: Money, rates: RateTable | None, machines: Machines):
    """The spot risk of pricing this option on ``offer`` (None when it is on-demand);
    ``wall`` is each machine's time."""
    if not offer.spot:
        return None
    from whichgpu.advise.spot_risk import spot_risk

    return spot_risk(job, wl, offer, count, replicas, wall, speed, price, rates, machines)


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
    # each option's (cost, time), worked out once (the Pareto test compares every pair)
    keys = {id(o): (rank_cost(job, o), _time_of(o)) for o in options}

    def cost_of(o: Option) -> float:
        return keys[id(o)][0]

    def time_of(o: Option) -> float:
        return keys[id(o)][1]

    if job.objective == "time":
        options.sort(key=lambda o: (time_of(o), cost_of(o), o.gpus))
    else:
        options.sort(key=lambda o: (cost_of(o), time_of(o), o.gpus))
    if not options:
        return
    best = options[0]
    pairs = [keys[id(p)] for p in options]
    for i, o in enumerate(options):
        near = False
        if i > 0:
            if job.objective == "time" and best.time_s is not None and o.time_s is not None:
                near = o.time_s.typical <= best.time_s.typical * (1 + NEAR_TIE)
            elif job.objective == "cost":
                near = cost_of(o) <= cost_of(best) * (1 + NEAR_TIE)
        c, t = keys[id(o)]
        dominated = any(pc <= c and pt <= t and (pc < c or pt < t) for pc, pt in pairs)
        options[i] = replace(o, near_tie=near, pareto=not dominated)
