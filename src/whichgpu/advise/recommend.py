"""The recommender: memory decides first, speed second, then price (S27).

Every catalog GPU x 1/2/4/8 (and cluster sizes for pre-training) is tried: the memory estimate
filters, the speed estimate gives a time range, and every matching offer is costed under its
own billing rule and instance size; the offer that makes the job cheapest is kept (a lower
hourly price with a one-hour minimum can lose to a dearer per-second offer on a short job).
Options are ranked by the objective; what was excluded keeps its reason, per failing size.

This module puts the answer together (``recommend``; ``recommend_for_rate`` for a request
rate) above the parts it calls: each GPU tried in evaluate.py (a rate's replica layouts in
serving.py), ranked in ranking.py, explained in explain.py.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from whichgpu.advise.evaluate import _POOLS, _SPEEDS, _evaluate_gpu, _fit, _option
from whichgpu.advise.exclusions import _memory_exclusion
from whichgpu.advise.explain import explain
from whichgpu.advise.job import MAX_CONCURRENCY, Job
from whichgpu.advise.options import Exclusion, Option, OwnedOption, Recommendation
from whichgpu.advise.ranking import _rank
from whichgpu.catalog.gpus import GPU, Catalog, default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.cost.currency import RateTable, convert
from whichgpu.errors import InputError
from whichgpu.estimate.calibration import Calibration
from whichgpu.estimate.memory.fit import layout_for, max_concurrency
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Message, msg
from whichgpu.units import Money
from whichgpu.vocabulary import ExclusionKind, Placement, Task, WorkKind

COUNTS = tuple(range(1, 9))  # every count a server holds (fit.COUNTS): 3 x RTX 3090 too
CLUSTER_COUNTS = (16, 32, 64, 128, 256, 512, 1024)
SPREAD_PROVIDERS = 4  # more providers than this for one job: no longer a plan to spread it


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
    from whichgpu.advise.spot_risk import explain_spot

    explain(rec, offers, catalog, rates, profile)
    rec.explanation += explain_spot(rec)
    if owned is not None:
        rec.owned = owned_options(job, owned, owned_count, currency, rates, profile)
    _note_no_offload(rec)
    rec = _flag_capacity(rec)
    from whichgpu.advise.owned_verdict import owned_verdict

    head = owned_verdict(rec)
    if head is not None:  # the person asked about their card first: its answer comes first
        if rec.owned_head is not None and rec.best is not None and rec.explanation:
            rec.explanation[0] = msg("owned.verdict.rentals", "Of the rentals: {line}",
                                     line=rec.explanation[0])
        rec.explanation.insert(0, head)
    return rec


def _flag_capacity(rec: Recommendation) -> Recommendation:
    """Flag options that need more GPUs of one kind from one provider than it is assumed to
    rent on demand (cost/capacity.py); when the best one does, say so second in the
    explanation, with the number and the assumption."""
    from whichgpu.cost.capacity import ceiling

    ceilings: dict[str, Any] = {}  # per provider, asked once per answer
    for i, o in enumerate(rec.options):
        c = ceilings.get(o.offer.provider)
        if c is None:
            c = ceilings[o.offer.provider] = ceiling(o.offer.provider)
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
    # no command named here: the web shows this note too (the CLI adds its own 'whichgpu tco')
    return per_hour, msg("owned.cost", "owned: no rental price; owning it costs about {cost} "
                         "per hour of use (its purchase spread over {years:g} years at {use:.0%} "
                         "use, and electricity at {kwh}/kWh)", cost=per_hour,
                         years=inputs.years, use=inputs.utilization, kwh=inputs.kwh_price)


def _note_no_offload(rec: Recommendation) -> None:
    """Say once why cards too small were not tried with weights in host RAM; when nothing
    runs the job as asked, what llama.cpp's offload would do on the size nearest to fitting
    (your own cards first), with its speed."""
    from whichgpu.estimate.memory.offload_alternative import llamacpp_alternative
    from whichgpu.estimate.memory.offload_plan import no_offload_reason

    w = rec.job.workload
    why = no_offload_reason(w)
    memory = [e for e in rec.excluded if e.kind == ExclusionKind.MEMORY]
    if not why or not (memory or rec.owned):
        return
    nothing_runs = not rec.options and not any(o.fits for o in rec.owned)
    if nothing_runs:  # 2 x rtx-3090 for gpt-oss-120b: vLLM cannot, llama.cpp can
        sizes = [(o.gpu, o.count) for o in sorted(rec.owned, key=lambda o: -o.count)] or [
            (e.gpu, e.count) for e in sorted(memory, key=lambda e: e.gap)]
        alternative = llamacpp_alternative(w, *sizes[0]) if sizes else None
        if alternative is not None:
            rec.explanation.append(alternative.describe())
            return
    if any(e.count == 1 for e in memory) or (nothing_runs and memory):
        rec.explanation.append(msg("explain.no_offload", "Cards too small for the whole model "
                                   "were not tried with part of it in host RAM: {why}.",
                                   why=why))


def recommend_for_rate(job, offers, *, catalog=None, rates=None, profile=None, gpus=None,
                       max_gpus: int | None = None):
    """The recommendation for a serving job given by its request rate (``job.kind ==
    'rate'``): one option per GPU (its cheapest replicas x TP), the rest excluded."""
    from whichgpu.advise.serving import _for_gpu, _latency_front, _serving_lines
    from whichgpu.advise.targets import Targets
    from whichgpu.estimate.speed import inference_lengths
    from whichgpu.estimate.speed.serving_engine import SERVING_ENGINES

    w = job.workload
    if w.engine_name not in SERVING_ENGINES:
        raise InputError(msg("serving.rate_engines", "sizing for a request rate models vLLM, "
                             "SGLang and TensorRT-LLM ({flag} vllm, sglang or trtllm), not "
                             "{engine}", flag=Field("engine"), engine=w.engine_name))
    prompt, output, _ = inference_lengths(w)  # the lengths every estimate below assumes
    job = replace(job, workload=w.with_(prompt_tokens=prompt, output_tokens=output,
                                        context=max(w.context or 0, prompt + output)))
    catalog = catalog or default_catalog()
    currency = _job_currency(job, offers)
    targets = Targets(job.requests_per_s, job.ttft_s, job.tpot_s, job.ttft_pct, job.tpot_pct)
    options: list[Option] = []
    excluded: list[Any] = []
    for gpu in gpus or catalog.gpus:
        opts, misses = _for_gpu(job, gpu, targets, offers, currency, rates, profile, max_gpus)
        options += opts or []
        excluded += misses
    _rank(job, options)
    options = _latency_front(job, options)
    from whichgpu.advise import goodput  # issue 28: a percentile target ranks on goodput

    options = goodput.rank(job, options)
    rec = Recommendation(job, currency, options, excluded, max_gpus=max_gpus,
                         only=[g.id for g in gpus] if gpus else None,
                         offered=frozenset(o.gpu for o in offers if job.spot or not o.spot))
    explain(rec, offers, catalog, rates, profile)
    rec.explanation[1:1] = _serving_lines(rec, targets)
    rec.explanation[1:1] = goodput.explanation(rec)
    if job.spot:  # issue 19: spot against on-demand, spares included
        from whichgpu.advise.spot_risk import explain_spot

        rec.explanation += explain_spot(rec)
    return rec
