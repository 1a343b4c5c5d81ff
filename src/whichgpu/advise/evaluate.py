"""One GPU for one job: every size of it tried (memory first, speed second, then each
matching offer costed under its own billing rule); the options that run it and the sizes
that fail, with why. A size for a request rate is sized in advise/serving.py."""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, cast

from whichgpu.advise.exclusions import _machine_exclusion, _memory_exclusion, _to_buy
from whichgpu.advise.job import MAX_CONCURRENCY, Job
from whichgpu.advise.machines import (
    SERVER_GPUS,
    SETUP_SOURCE,
    Machines,
    as_machine,
    machine_setup,
    machines_for,
    offer_assumptions,
)
from whichgpu.advise.options import Exclusion, Option
from whichgpu.advise.ranking import _rank_key, _ranked, _unit_ranked
from whichgpu.catalog.gpus import GPU
from whichgpu.catalog.offers import Offer
from whichgpu.cost.billing import (
    MoneyRange,
    run_cost_range,
    run_cost_range_in,
    run_cost_typical,
)
from whichgpu.cost.currency import RateTable, convert
from whichgpu.engines import module
from whichgpu.errors import InputError
from whichgpu.estimate import memo
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import describe_layout, layout_for, max_concurrency, memory_band
from whichgpu.estimate.speed import SpeedEstimate, estimate_speed
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Duration, Money, Range
from whichgpu.vocabulary import ExclusionKind, Placement, Task, WorkKind

#: The rates that measure a workload's work, and the unit its cost is quoted per when no
#: amount of work is given: rate name -> (rate units per hour factor, unit label, units quoted).
_WORK_RATES = {
    "tokens_per_s": (3600, msg("unit.train_tokens", "1M training tokens"), 1e6),
    "images_per_min": (60, msg("unit.images", "1,000 images"), 1e3),
    "videos_per_hour": (1, msg("unit.video", "video"), 1),
    "steps_per_s": (3600, msg("unit.steps", "1,000 steps"), 1e3),
}


# One recommendation's speeds, by (workload, GPU, count): a size priced on spot and on-demand,
# and batch tokens split into shares, ask for the same speed again. Set for the length of one
# recommend() call only (None outside it), so it never outlives the objects it is keyed by.
_SPEEDS: ContextVar[dict[tuple[int, int, int], tuple[Workload, GPU, SpeedEstimate]] | None] = \
    ContextVar("whichgpu_recommend_speeds", default=None)


def _speed(wl: Workload, gpu: GPU, count: int, profile) -> SpeedEstimate:
    """``estimate_speed`` for ranking (no fit check, no saturation search), remembered for
    the recommendation under way (the same workload object on the same GPU object), and
    across answers by value (:func:`_speed_kept`)."""
    table = _SPEEDS.get()
    if table is None:
        return _speed_kept(wl, gpu, count, profile)
    key = (id(wl), id(gpu), count)
    hit = table.get(key)
    if hit is not None and hit[0] is wl and hit[1] is gpu:
        return hit[2]
    speed = _speed_kept(wl, gpu, count, profile)
    table[key] = (wl, gpu, speed)
    return speed


# estimate_speed's answers for ranking, by value across answers (the workload's settings,
# the GPU, the calibration profile by identity, the measured-kernel choice): questions that
# differ only in their amount of work ask the same speeds
_SPEED_TABLE = memo.Table(2048)  # ~8 KB a speed (its messages): ~16 MB at most


def _speed_kept(wl: Workload, gpu: GPU, count: int, profile) -> SpeedEstimate:
    """``estimate_speed(wl, gpu, count)`` for ranking, kept by value in a bounded table
    (estimate/memo.py: emptied when a constant changes, never used in the reference path).
    A speed moved by a store's measured runs is not kept: the store gains runs."""
    key: Any = None
    if getattr(profile, "measured_runs", None) is None and memo.shared(wl.model):
        from whichgpu.estimate.speed.opt_in import opted_in

        try:
            key = (id(wl.model), memo.workload_settings(wl), id(gpu), count, id(profile),
                   opted_in())
            hit = _SPEED_TABLE.get(key)
        except TypeError:  # an unhashable setting: no memo
            key = hit = None
        if hit is not None and hit[0] is wl.model and hit[1] is gpu and hit[2] is profile:
            return cast(SpeedEstimate, hit[3])
    speed = estimate_speed(wl, gpu, count, profile=profile, check_fit=False, saturation=False)
    if key is not None:
        _SPEED_TABLE.put(key, (wl.model, gpu, profile, speed))
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


# What _sized found for one size of one GPU (its first value)
_SKIP, _HOST, _NO_BATCH, _TOO_BIG, _FITS = range(5)
# _sized's answers by value, across answers: questions that differ only in their amount of
# work (1,000 or 1,234 images, a deadline, a budget) size every GPU x count the same way
_SIZES = memo.Table(4096)


def _sized(w: Workload, gpu: GPU, count: int, batched: bool, concurrency: int | None
           ) -> tuple[int, Any, int, int, Any]:
    """The amount-free part of one size of one GPU: (state, workload, bytes per GPU, batch,
    offload plan). The layout of ``count`` GPUs (_SKIP when there is none), llama.cpp's
    offload (_HOST: the plan needs more host RAM than is free; the bytes are the layout's
    without offload), as many sequences as fit when ``batched`` (the work is tokens:
    _NO_BATCH when not one, or not ``concurrency``, fits; the bytes at that batch), then
    what users do on a card too small (_TOO_BIG with the smallest need, else _FITS).

    A pure function of its arguments (the workload by value, the GPU by identity), so its
    answers are kept by value in a bounded table (estimate/memo.py: never in the reference
    path); the workloads it returns are then the same objects from one answer to the next,
    and the memos keyed by their identity find them again."""
    if not memo.shared(w.model):  # a pasted config's model: its answer's own
        return _size(w, gpu, count, batched, concurrency)
    try:
        key: Any = (id(w.model), memo.workload_settings(w), id(gpu), count, batched,
                    concurrency)
        hit = _SIZES.get(key)
    except TypeError:  # an unhashable setting: no memo
        key, hit = None, None
    if hit is not None and hit[0] is w.model and hit[1] is gpu:
        return hit[2]
    got = _size(w, gpu, count, batched, concurrency)
    if key is not None:
        _SIZES.put(key, (w.model, gpu, got))
    return got


def _size(w: Workload, gpu: GPU, count: int, batched: bool, concurrency: int | None
          ) -> tuple[int, Any, int, int, Any]:
    """:func:`_sized`, worked out."""
    try:
        wl = layout_for(w, count)
    except InputError:
        return _SKIP, None, 0, 0, None
    wl, spilled = _with_offload(wl, gpu, count)
    if spilled is not None and not spilled.host_ok:
        return _HOST, None, estimate_memory(layout_for(w, count)).total_bytes, 0, spilled
    batch = 1
    if batched:
        cap = concurrency or MAX_CONCURRENCY
        batch = max_concurrency(wl, gpu, count, limit=cap)
        if concurrency and batch < concurrency:
            batch = 0
        if batch == 0:
            need = estimate_memory(wl.with_(batch=concurrency or 1)).total_bytes
            return _NO_BATCH, None, need, 0, spilled
        wl = wl.with_(batch=batch)
    wl, need = _fit(wl, w, gpu.usable_memory_bytes)
    if wl.is_diffusion and count > 1 and need <= gpu.usable_memory_bytes:
        # issue 29: a split of the tokens runs with the ring degree fastest on this card
        from whichgpu.advise.diffusion_ring import fastest_ring

        wl = fastest_ring(wl, gpu)
    return (_TOO_BIG if need > gpu.usable_memory_bytes else _FITS), wl, need, batch, spilled


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
    batched = job.kind in (WorkKind.TOKENS, WorkKind.DAILY, WorkKind.SERVING)
    opts: list[Option] = []
    misses: list[Exclusion] = []
    for count in counts:
        if count > SERVER_GPUS and w.task != Task.PRETRAIN and \
                any(o.count <= SERVER_GPUS for o in opts):
            break  # a cluster only when one server is not enough (pre-training: always, S5)
        state, sized, need, batch, spilled = _sized(w, gpu, count, batched, job.concurrency)
        if state == _SKIP:
            continue
        if state == _HOST:
            host = spilled.memory.host
            misses.append(_memory_exclusion(
                gpu, count, need, bool(pool),
                [msg("exclusion.host_ram", "with llama.cpp offload ({flags}) it needs "
                     "{host:.1f} GB of host RAM, more than the {free:.0f} GB free ({flag})",
                     flags=spilled.flags, host=spilled.host_bytes / 1e9,
                     free=(host.usable_ram_bytes if host else 0) / 1e9,
                     flag=Field("host_ram"))]))
            continue
        if state == _NO_BATCH:
            misses.append(_memory_exclusion(gpu, count, need, bool(pool)))
            continue
        wl = sized
        if state == _TOO_BIG:
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
        out.append(_automatic(wl, wl.offload, True)
                   or msg("adapted.offload", "with {flag}", flag=Field("offload", wl.offload)))
    if wl.is_diffusion and wl.tp and not asked.tp:
        out.append(msg("adapted.diffusion_tp", "split over {n} GPUs by tensor parallelism "
                       "({flag})", n=wl.tp, flag=Field("engine", wl.engine_name)))
    if wl.uses_checkpointing and not asked.uses_checkpointing:
        out.append(msg("adapted.checkpointing", "with gradient checkpointing"))
    if wl.vae_tiling and not asked.vae_tiling:
        out.append(_automatic(wl, "vae_tiling", True)
                   or msg("adapted.vae_tiling", "with {flag}", flag=Field("vae_tiling")))
    return out


def _automatic(wl: Workload, change: str, short: bool) -> Message | None:
    """What the engine did by itself to fit (an offload mode, or "vae_tiling"), in its own
    words (an engine module's ``automatic_note``, engines/comfyui.py), or None: the setting's."""
    own = getattr(module(wl.engine_name), "automatic_note", None)
    return own(change, short) if own is not None else None


def _main_rate(speed: SpeedEstimate) -> str:
    for name in _WORK_RATES:
        if name in speed.rates:
            return name
    return next(iter(speed.rates))


def _layout(wl: Workload, replicas: int) -> Message:
    """How the GPUs are used: 'single GPU', 'tp=4', 'dp=64 ZeRO-3', '2 replicas of 2 GPUs';
    remembered per sized workload of a shared model (the same objects from one answer to the
    next: _sized)."""
    return _layout_kept(wl, replicas) if memo.shared(wl.model) else _layout_said(wl, replicas)


@memo.by_identity(4096)
def _layout_kept(wl: Workload, replicas: int) -> Message:
    return _layout_said(wl, replicas)


def _layout_said(wl: Workload, replicas: int) -> Message:
    base = describe_layout(wl)
    if replicas == 1:
        return base
    if wl.gpus == 1:
        return msg("layout.replicas.one", "{n} replicas of 1 GPU", n=replicas)
    return msg("layout.replicas", "{n} replicas of {gpus} GPUs, {layout}", n=replicas,
               gpus=wl.gpus, layout=base)


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
        s = _speed(wl, gpu, count, profile) if per_replica == batch else _speed_kept(
            wl.with_(batch=per_replica), gpu, count, profile)
        if s.rates[rate_name].typical < each and per_replica > 1 and _alone_fastest(wl,
                                                                                  profile):
            # the doubling below ends at one user per replica (the speed it would reach
            # last): when even that is too slow, no replica count is fast enough
            alone = _speed_kept(wl.with_(batch=1), gpu, count, profile)
            if alone.rates[rate_name].typical < each:
                s, per_replica = alone, 1
        while s.rates[rate_name].typical < each and per_replica > 1:
            replicas *= 2
            per_replica = math.ceil(users / replicas)
            s = _speed_kept(wl.with_(batch=per_replica), gpu, count, profile)
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
        # issue 29: independent pipelines (a ComfyUI instance per GPU) share out the videos
        pipelines = max(int(speed.scalars.get("layout_replicas", 1) or 1), 1)
        seconds = rate.scale(_given(job.videos) / pipelines)
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
    # each machine runs for the wall time; a daily volume is served as it comes, so each
    # replica's machine is kept up (billed) the whole day, busy or not (``seconds`` stays the
    # busy time)
    wall = Range(_DAY_S, _DAY_S, _DAY_S) if kind == WorkKind.DAILY and seconds is not None \
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
        elif defer and not offer.spot:
            # what the range below would rank it by (its typical end, by the same
            # operations); the low and high ends are worked out for the cheapest offer only
            if setup is not None and m.machines > 1:
                ranked[id(offer)] = run_cost_typical(offer, wall.typical, currency, rates) + \
                    run_cost_typical(offer, wall.typical + setup.typical, currency, rates,
                                     m.machines - 1)
            else:
                ranked[id(offer)] = run_cost_typical(offer, wall.typical, currency, rates,
                                                     m.machines)
            cost = None
        else:
            cost = _cost_range(offer, wall, setup, m, currency, rates)
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
        cost = _cost_range(offer, wall, setup, machines_of[id(offer)], currency, rates)
    if kind == WorkKind.DAILY and seconds is not None:
        seconds = seconds.scale(1 / replicas)  # busy time per day of each replica
        notes.append(_daily_busy(seconds, price))
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
        notes.append(_automatic(wl, wl.offload, False)
                     or msg("option.offload", "with {flag}: components wait in CPU memory "
                            "between stages (a little slower, same output)",
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
        notes.append(_automatic(wl, "vae_tiling", False)
                     or msg("option.vae_tiling", "with {flag}: the VAE decodes overlapping "
                            "tiles (the peak of a large image or video falls; the decode takes "
                            "longer)", flag=Field("vae_tiling")))
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
    band = _band(wl)
    floor = need
    if gpu.usable_memory_bytes - need <= band * gpu.usable_memory_bytes and batch > 1 \
            and not job.concurrency:
        # the batch is ours, as many sequences as fit: less free memory than estimated makes
        # the engine run fewer at once (slower), it does not fail; what must fit is one
        floor = _one_sequence_bytes(wl)
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
    if kind == WorkKind.DAILY and seconds is not None:
        said.append(msg("assume.daily_kept_up", "a daily volume is served as it comes: the "
                        "machine is kept up and billed 24 h a day, busy or not (the cost is "
                        "one day of it)"))
    return Option(gpu, count, offer, price, seconds, cost, need, speed, rate_name, rate,
                  batch, replicas, tuple(notes), layout=_layout(wl, replicas),
                  assumptions=tuple(offer_assumptions(offer, machines_of[id(offer)], gpu,
                                                    _speed_link(speed)))
                  + tuple(said) + (tuple(risk.assumptions) if risk is not None else ()),
                  unit_cost=unit_cost, unit=unit, spot_risk=risk, workload=wl,
                  machines=machines_of[id(offer)])


#: A daily volume's machines are billed for a whole day (seconds)
_DAY_S = 86400.0


def _daily_busy(busy: Range, price: Money) -> Message:
    """The secondary, busy-only figure of a daily volume: the share of the kept-up day its
    replicas work, and what that time alone would cost at the hourly price."""
    return msg("option.daily_busy", "busy about {time} of each day ({share:.1%}); billed "
               "only while busy it would cost about {cost} a day (not how a rental bills)",
               time=Duration(busy.typical), share=busy.typical / _DAY_S,
               cost=Money(price.amount * busy.typical / 3600.0, price.currency))


def _one_sequence_bytes(wl: Workload) -> int:
    """Bytes per GPU of ``wl`` at one sequence (what must fit when the batch is ours);
    remembered per sized workload of a shared model (memo.shared)."""
    if memo.shared(wl.model):
        return _one_sequence_kept(wl)
    return estimate_memory(wl.with_(batch=1)).total_bytes


@memo.by_identity(4096)
def _one_sequence_kept(wl: Workload) -> int:
    return estimate_memory(wl.with_(batch=1)).total_bytes


def _band(wl: Workload) -> float:
    """``memory_band(wl)``, remembered per sized workload of a shared model."""
    return _band_kept(wl) if memo.shared(wl.model) else memory_band(wl)


@memo.by_identity(4096)
def _band_kept(wl: Workload) -> float:
    return memory_band(wl)


#: Work out a size's cost range through the records (run_cost_range, MoneyRange.convert,
#: .scale, .plus) instead of on floats: the reference tests/advise/test_cost_range_floats.py
#: compares with
_RANGES_AS_RECORDS = [False]


def _cost_range(offer: Offer, wall: Range, setup: Range | None, m: Machines, currency: str,
                rates) -> MoneyRange:
    """The low-high cost of running ``m`` machines of ``offer`` for ``wall`` each; with a
    ``setup``, each machine past the first also boots and loads the weights (billed)."""
    if _RANGES_AS_RECORDS[0]:  # the reference: the records' own operations
        if setup is not None and m.machines > 1:
            first = run_cost_range(offer, wall).convert(currency, rates)
            more = run_cost_range(offer, Range(wall.low + setup.low, wall.typical
                                               + setup.typical, wall.high + setup.high))
            return first.plus(more.convert(currency, rates).scale(m.machines - 1))
        return run_cost_range(offer, wall).convert(currency, rates).scale(m.machines)
    # the same operations on floats (cost/billing.run_cost_range_in), one record at the end
    if setup is not None and m.machines > 1:
        one = run_cost_range_in(offer, wall, currency, rates)
        rest = run_cost_range_in(offer, Range(wall.low + setup.low, wall.typical
                                              + setup.typical, wall.high + setup.high),
                                 currency, rates, m.machines - 1)
        ends = (one[0] + rest[0], one[1] + rest[1], one[2] + rest[2])
    else:
        ends = run_cost_range_in(offer, wall, currency, rates, m.machines)
    return MoneyRange(Money(ends[0], currency), Money(ends[1], currency),
                      Money(ends[2], currency))


def _spot(job: Job, wl: Workload, offer: Offer, count: int, replicas: int, wall,
          speed: SpeedEstimate, price: Money, rates: RateTable | None, machines: Machines):
    """The spot risk of pricing this option on ``offer`` (None when it is on-demand);
    ``wall`` is each machine's time."""
    if not offer.spot:
        return None
    from whichgpu.advise.spot_risk import spot_risk

    return spot_risk(job, wl, offer, count, replicas, wall, speed, price, rates, machines)


def _speed_link(speed: Any) -> str | None:
    """The link kind the speed estimate priced the linked GPUs' traffic over (flaws8 2: the
    offer's assumption names that link, not the catalog's best one)."""
    link = getattr(speed, "scalars", {}).get("link")
    return str(link) if link else None
