"""Why the first choice wins, why the others were excluded, what would change the answer.

Every line is a :class:`~whichgpu.messages.Message` (an id, its English template and typed
parameters): the command line prints its English, the JSON carries it, and the web says it
in the reader's language from its catalog. Nothing here reads text back.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from whichgpu.estimate.memory.changes import suggestions
from whichgpu.estimate.memory.fit import COUNTS, fits
from whichgpu.messages import Field, Join, Message, Some, msg
from whichgpu.units import Duration, format_money
from whichgpu.vocabulary import (
    Bound,
    Confidence,
    ExclusionKind,
    Objective,
    Placement,
    Ranking,
    Task,
    WorkKind,
    word,
)

if TYPE_CHECKING:
    from whichgpu.advise.options import Exclusion, Option, Recommendation


def money_range(r: Any) -> Message:
    """'$1.23 ($1.00-$1.50)'; '$1.23' alone when both ends print as the value (a cost that
    does not move with the speed: a daily volume's machine is billed the whole day)."""
    if money_fixed(r):
        return msg("explain.money_fixed", "{typical}", typical=r.typical)
    return msg("explain.money_range", "{typical} ({low}-{high})", typical=r.typical, low=r.low,
               high=r.high)


def money_fixed(r: Any) -> bool:
    """True when a money range's ends print as its value ('$7.92 ($7.92-$7.92)' says
    nothing a reader can use); the JSON keeps the three fields."""
    return format_money(r.low) == format_money(r.typical) == format_money(r.high)


def what(o: Option, daily: bool = False) -> Message:
    """An option's time and cost: 'about 3h 20m (2h-4h) and $1.23 ($1.00-$1.50)'. ``daily``:
    the job is a daily volume, so its time and cost are each day's (the machine kept up 24 h),
    as the advisor page says them."""
    if o.time_s is None:
        if o.unit_cost is not None and o.unit:
            return msg("explain.what.per_unit", "{cost} per {unit} at {price}/h",
                       cost=money_range(o.unit_cost), unit=o.unit, price=o.price_per_hour)
        return msg("explain.what.per_hour", "{cost} per hour", cost=o.cost.typical)
    job = msg("explain.what.job", "about {time} ({low}-{high}) and {cost}",
              time=Duration(o.time_s.typical), low=Duration(o.time_s.low),
              high=Duration(o.time_s.high), cost=money_range(o.cost))
    if money_fixed(o.cost) and o.time_s.low < o.time_s.high:
        # the time has a range but the cost has none: the machine is billed for a fixed
        # time (a daily volume: kept up 24 h, busy or not), so the speed moves no money
        job = msg("explain.what.job_fixed_cost", "busy about {time} ({low}-{high}); {cost} "
                  "whatever the speed, as the machine is billed for a fixed time",
                  time=Duration(o.time_s.typical), low=Duration(o.time_s.low),
                  high=Duration(o.time_s.high), cost=money_range(o.cost))
        if daily:
            job = msg("explain.what.daily_fixed_cost", "busy about {time} ({low}-{high}) of "
                      "each day; {cost} a day whatever the speed, as the machine is kept up "
                      "24 h", time=Duration(o.time_s.typical), low=Duration(o.time_s.low),
                      high=Duration(o.time_s.high), cost=money_range(o.cost))
    if getattr(o.spot_risk, "cost", None) is None:  # issue 19: a spot option's expected cost
        return job
    from whichgpu.advise.spot_risk import expected_phrase

    return msg("explain.what.job_spot", "{job} uninterrupted (on spot, {expected})", job=job,
               expected=expected_phrase(o.spot_risk))


def name(o: Option) -> Message | Placement:
    """An option's label, with its layout when it has several replicas (two '8 x a100' can
    be 4 replicas of 2 GPUs or 2 of 4), and the machines it rents when it is not one
    machine used whole ('4 x rtx-6000-ada on 4 separate machines of 1 GPU(s)')."""
    label: Message | Placement = o.label
    if o.replicas > 1:
        label = msg("explain.name.layout", "{gpus} ({layout})", gpus=o.label, layout=o.layout)
    if shown_machines(o):
        return msg("explain.name.machines", "{gpus} on {machines}", gpus=label,
                   machines=o.shape.describe())
    return label


def shown_machines(o: Option) -> bool:
    """Whether an option's label says its machines: several GPUs, several machines, or GPUs
    paid for and not used."""
    m = o.shape
    return o.gpus > 1 or m.machines > 1 or m.paid > m.used


def _per_gpu_speed(o: Option) -> float:
    """Work per second per GPU (times such as seconds per step are inverted)."""
    r = o.rate.typical
    if o.rate_name in ("step_s", "seconds_per_video"):
        r = 1 / r if r > 0 else 0.0
    return r / o.gpus


def goal(rec: Recommendation) -> Message:
    """What the winner is best at, as the ranking says."""
    ranked = rec.ranked_by
    if ranked is Ranking.SHORTEST_TIME:
        return msg("explain.goal.time", "shortest time")
    if ranked is Ranking.FASTEST_PER_USER:
        return msg("explain.goal.per_user", "fastest speed per user")
    if ranked is Ranking.TOTAL_COST:
        return msg("explain.goal.total", "lowest total cost")
    if ranked is Ranking.COST_PER_UNIT:
        return msg("explain.goal.per_unit", "lowest cost per {unit}", unit=rec.ranking_unit)
    if ranked is Ranking.GOODPUT:  # issue 28: advise/goodput.py
        return msg("explain.goal.goodput", "most requests meeting the targets per unit of cost")
    return msg("explain.goal.per_hour", "lowest cost per hour")


def _weights(w: Any) -> str | None:
    """The weights' format as the answer names it (awq, q4_k_m, fp8, bf16), or None."""
    try:
        return str(w.quant_name)
    except (AttributeError, AssertionError):
        return None


def _fill(best: Any, job: Any, words: dict[str, Any]) -> Message:
    """How the best option fills its memory (the first half of the memory/speed line)."""
    if best.batch > 1 and not job.concurrency:
        return msg("explain.fill.batch", "{batch} sequences at once fill {need:.1f} GB per GPU "
                   "of {usable:.1f} GB ({spare:.1f} GB spare; {layout}).", batch=best.batch,
                   need=words["need"], usable=words["usable"], spare=words["spare"],
                   layout=words["layout"])
    return msg("explain.fill", "it needs {need:.1f} GB per GPU of {usable:.1f} GB ({spare:.1f} "
               "GB spare; {layout}).", need=words["need"], usable=words["usable"],
               spare=words["spare"], layout=words["layout"])


def explain(rec: Recommendation, offers: list[Any], catalog: Any, rates: Any,
            profile: Any = None) -> None:
    """Fill ``rec.explanation``, ``rec.what_would_change`` and ``rec.closest`` in place."""
    from whichgpu.advise.ranking import rank_cost

    job = rec.job
    daily = job.kind == WorkKind.DAILY
    opts = rec.options
    lines: list[Message] = []
    change: list[Message] = []
    if opts:
        best = opts[0]
        at = (msg("explain.at_price", " at {price}/h", price=best.price_per_hour)
              if best.time_s is not None else "")
        lines.append(msg("explain.wins", "{name} wins with the {goal}: {what}{at} "
                         "({provider}, {billing}).", name=name(best), goal=goal(rec),
                         what=what(best, daily), at=at, provider=best.offer.provider,
                         billing=best.offer.billing_text()))
        if job.kind == WorkKind.NONE:
            if rec.ranked_by is Ranking.COST_PER_UNIT and best.unit:
                lines.append(msg("explain.no_amount.per_unit", "No amount of work given: "
                                 "ranked by the cost of the same work (per {unit}), shown with "
                                 "the price per hour.", unit=best.unit))
            else:
                lines.append(msg("explain.no_amount.per_hour", "No amount of work given: "
                                 "ranked by the price per hour of a configuration that holds "
                                 "it (add {tokens}, {images}, {steps} ... to rank by the cost "
                                 "of a job).", tokens=Field("tokens"), images=Field("images"),
                                 steps=Field("steps")))
        headroom = best.gpu.usable_memory_bytes - best.memory_bytes
        words = dict(need=best.memory_bytes / 1e9, usable=best.gpu.usable_memory_bytes / 1e9,
                     spare=headroom / 1e9, layout=best.layout,
                     bound=word(Bound, best.speed.bound), precision=best.speed.precision,
                     confidence=word(Confidence, best.speed.confidence))
        weights = _weights(job.workload)
        sixteen = {"bf16", "fp16", "f16"}  # 16-bit weights at 16-bit: nothing to add
        if weights is not None and weights != best.speed.precision and not (
                weights in sixteen and best.speed.precision in sixteen):
            # the weights' own format, and the precision the matrix maths runs at (an AWQ
            # model is 4-bit in memory and bf16 in the matmuls): never only the latter
            lines.append(msg("explain.memory_speed.weights", "Memory first: {fill} Speed "
                             "second: {bound}-bound with {weights} weights (computed at "
                             "{precision}), confidence {confidence}.", fill=_fill(best, job,
                                                                                words),
                             weights=weights, **{k: v for k, v in words.items()
                                                 if k in ("bound", "precision",
                                                          "confidence")}))
        elif best.batch > 1 and not job.concurrency:  # the batch is ours: as many as fit
            lines.append(msg("explain.memory_speed.batch", "Memory first: {batch} sequences at "
                             "once fill {need:.1f} GB per GPU of {usable:.1f} GB ({spare:.1f} "
                             "GB spare; {layout}). Speed second: {bound}-bound at {precision}, "
                             "confidence {confidence}.", batch=best.batch, **words))
        else:
            lines.append(msg("explain.memory_speed", "Memory first: it needs {need:.1f} GB per "
                             "GPU of {usable:.1f} GB ({spare:.1f} GB spare; {layout}). Speed "
                             "second: {bound}-bound at {precision}, confidence {confidence}.",
                             **words))
        if len(opts) > 1:
            second = opts[1]
            finishes = getattr(second.spot_risk, "finishes", (True,) * 3)[1]  # issue 19
            if job.objective == Objective.COST and rank_cost(job, best) > 0 and finishes:
                diff = rank_cost(job, second) / rank_cost(job, best) - 1
                lines.append(msg("explain.next.diff", "Next: {name}, {what} ({diff:+.0%} "
                                 "cost).", name=name(second), what=what(second, daily),
                                 diff=diff))
            else:
                lines.append(msg("explain.next", "Next: {name}, {what}.", name=name(second),
                                 what=what(second, daily)))
        ties = [name(o) for o in opts[1:] if o.near_tie]
        if ties:
            lines.append(msg("explain.near_tie", "Near-tie (within 5 %): {options}; the ranges "
                             "overlap, so prices on the day decide.", options=Join(ties)))
        slower = _slower_but_cheaper(rec, best)
        if slower:
            lines.append(slower)
        lines.append(_counts_line(rec))
        no_fp8 = sorted({o.gpu.id for o in opts if o.lacks_fp8})
        if no_fp8:
            # the format the cards lack, not 'FP8 or FP4' (an H100 has FP8, not MXFP4's FP4)
            lines.append(msg("explain.no_native", "Without hardware support for {weights} "
                             "weights ({gpus}), the weights run through 16-bit matmuls: those "
                             "cards are kept, with their slower speed (a note, not an "
                             "exclusion).", weights=_weights(job.workload) or "8-bit or 4-bit",
                             gpus=Join(no_fp8)))
        for note in best.notes:
            if getattr(note, "id", None) != "option.no_fp8":
                lines.append(msg("explain.note", "Note: {note}.", note=note))
        for a in best.assumptions:
            lines.append(msg("explain.assumes", "Assumes: {assumption}.", assumption=a))
        change += _what_changes(rec, best, offers, rates, profile)
    else:
        where: list[Message] = []
        if rec.only:
            where.append(msg("explain.nothing.among", "among {gpus}", gpus=Join(rec.only)))
        if rec.max_gpus:
            where.append(msg("explain.nothing.at_most", "with at most {n} GPU(s)",
                             n=rec.max_gpus))
        lines.append(msg("explain.nothing.where", "Nothing in the catalog and price list can "
                         "run this job as asked ({where}).", where=Join(where, "; "))
                     if where else msg("explain.nothing", "Nothing in the catalog and price "
                                       "list can run this job as asked."))
        closest = closest_miss(rec.excluded)
        if closest is not None:
            no_offer = not closest.has_offer and closest.kind != ExclusionKind.OFFER
            rec.closest = (msg("explain.closest.no_offer", "{where}: {reason}; and the price "
                               "list has no offer for it", where=placement(closest),
                               reason=closest.reason) if no_offer else
                           msg("explain.closest.text", "{where}: {reason}",
                               where=placement(closest), reason=closest.reason))
            lines.append(msg("explain.closest", "Closest: {closest}.", closest=rec.closest))
            if not closest.has_offer:
                offered = closest_miss([e for e in rec.excluded if e.has_offer])
                if offered is not None:
                    lines.append(msg("explain.closest_offered", "Closest with an offer: "
                                     "{where}: {reason}.", where=placement(offered),
                                     reason=offered.reason))
        change += _memory_fixes(rec, catalog)
    rec.explanation = lines
    rec.what_would_change = change


def placement(e: Exclusion) -> Placement:
    return Placement(e.gpu.id, e.count)


def excluded_counts(rec: Recommendation) -> tuple[int, int, int]:
    """(GPUs that cannot run the job at any size tried, how many of those the price list does
    not rent, smaller sizes excluded of GPUs that do run it with more cards)."""
    with_options = {o.gpu.id for o in rec.options}
    gpus = {e.gpu.id for e in rec.excluded if e.gpu.id not in with_options}
    no_offer = {e.gpu.id for e in rec.excluded if e.gpu.id in gpus and not e.has_offer}
    smaller = sum(1 for e in rec.excluded if e.gpu.id in with_options)
    return len(gpus), len(no_offer), smaller


def _counts_line(rec: Recommendation) -> Message:
    gpus, no_offer, smaller = excluded_counts(rec)
    extra: list[Message] = []
    if no_offer:
        extra.append(msg("explain.counts.no_offer", " ({n} of them not in this price list)",
                         n=no_offer))
    if smaller:
        extra.append(msg("explain.counts.smaller", ", and {n} smaller size(s) of GPUs that "
                         "run it with more cards", n=smaller))
    return msg("explain.counts", "{options} configuration(s) can run it. Excluded: {gpus} "
               "GPU(s){extra}.", options=len(rec.options), gpus=gpus, extra=Join(extra, ""))


def _per_gpu_price(o: Option) -> float:
    """The option's price per GPU-hour paid: its whole instances over the GPUs they hold (an
    option on one GPU of an 8-GPU instance pays for eight)."""
    return o.price_per_hour.amount / max(o.shape.paid, 1)


def _slower_but_cheaper(rec: Recommendation, best: Option) -> Message | None:
    """Why a slower card wins on cost: the faster cards cost more per GPU-hour than they gain
    per GPU. Compared at the same number of GPUs where there is one (scaling changes speed
    per GPU), on the same pricing (spot with spot), and per GPU-hour paid."""
    if rec.job.objective != Objective.COST or rec.job.per_hour:
        return None
    mine = _per_gpu_speed(best)
    per_gpu_price = _per_gpu_price(best)
    faster = [o for o in rec.options if o.gpu.id != best.gpu.id and _per_gpu_speed(o) > mine]
    if not faster or mine <= 0 or per_gpu_price <= 0:
        return None
    same = [o for o in faster if o.gpus == best.gpus]
    pool = [o for o in (same or faster) if o.offer.spot == best.offer.spot] or same or faster
    top = max(_per_gpu_speed(o) for o in pool)
    # the fastest card per GPU, at its cheapest GPU-hour (it does not change with the job)
    f = min((o for o in pool if _per_gpu_speed(o) >= top * (1 - 1e-9)), key=_per_gpu_price)
    speed_ratio = _per_gpu_speed(f) / mine
    price_ratio = _per_gpu_price(f) / per_gpu_price
    if price_ratio <= speed_ratio:
        return None
    both = (msg("explain.slower.both", " (both on {n} GPUs)", n=best.gpus)
            if f.gpus == best.gpus and best.gpus > 1 else "")
    return msg("explain.slower", "Per GPU{both}, {fast} is {speed:.1f}x as fast as {slow} but "
               "costs {price:.1f}x as much per hour for each GPU paid here, so {slow} does the "
               "same work for less; the faster card wins when time counts ({objective}, "
               "{deadline}, {max_gpus}).", both=both, fast=f.gpu.id, slow=best.gpu.id,
               speed=speed_ratio, price=price_ratio, objective=Field("objective", Objective.TIME),
               deadline=Field("deadline"), max_gpus=Field("max_gpus"))


def closest_miss(excluded: list[Exclusion]) -> Exclusion | None:
    """The exclusion nearest to working: the smallest gap relative to what was needed
    (memory short, time late, money over, speed missing)."""
    if not excluded:
        return None
    # a size that runs the job, only too dear or too slow, is nearest whatever the gaps (with
    # a $0.01/h budget the closest was "gb200 fits but has no offer", never "2 x A100 fits at
    # $1.44/h"); then one that holds it but nobody here rents; then one too small; no engine
    # last
    tier = {ExclusionKind.OFFER: 1, ExclusionKind.MEMORY: 2, ExclusionKind.ENGINE: 3}
    return min(excluded, key=lambda e: (tier.get(e.kind, 0), e.gap, e.count))


def _what_changes(rec: Recommendation, best: Option, offers: list[Any], rates: Any,
                  profile: Any) -> list[Message]:
    from whichgpu.advise.ranking import rank_cost

    job = rec.job
    out: list[Message] = []
    opts = rec.options
    timed = [o for o in opts if o.time_s is not None]
    if job.objective == Objective.COST and best.time_s is not None and timed:
        fastest = min(timed, key=lambda o: o.time_s.typical if o.time_s else 0.0)
        if fastest is not best and fastest.time_s is not None:
            out.append(msg("change.time_matters", "If time matters more: {name} takes {time} "
                           "for {cost} ({flag}).", name=name(fastest),
                           time=Duration(fastest.time_s.typical), cost=fastest.cost.typical,
                           flag=Field("objective", Objective.TIME)))
    elif job.objective == Objective.TIME:
        cheapest = min(opts, key=lambda o: rank_cost(job, o))
        if cheapest is not best:
            took = (Duration(cheapest.time_s.typical) if cheapest.time_s else
                    msg("change.same_hours", "the same hours"))
            out.append(msg("change.cost_matters", "If cost matters more: {name} costs {cost} "
                           "and takes {time} ({flag}).", name=name(cheapest),
                           cost=cheapest.cost.typical, time=took,
                           flag=Field("objective", Objective.COST)))
    win = price_to_win(rec)
    if win is not None:
        runner, target, now = win
        out.append(msg("change.price_to_win.per_gpu", "{name} would win below {target}/h per "
                       "GPU (now {now}/h per GPU).", name=name(runner), target=target, now=now)
                   if runner.gpus > 1 else
                   msg("change.price_to_win", "{name} would win below {target}/h (now "
                       "{now}/h).", name=name(runner), target=target, now=now))
    if best.gpus > 1:
        fewer = [o for o in opts if o.gpus < best.gpus]
        if fewer:
            o = min(fewer, key=lambda o: rank_cost(job, o)) if job.objective == Objective.COST \
                else fewer[0]
            out.append(msg("change.fewer_gpus", "On fewer GPUs: {name}, {what} ({flag}).",
                           name=name(o), what=what(o, rec.job.kind == WorkKind.DAILY),
                           flag=Field("max_gpus", o.gpus)))
    late = [e for e in rec.excluded if e.kind == ExclusionKind.DEADLINE]
    if late:
        e = min(late, key=lambda e: e.shortfall)
        out.append(msg("change.deadline", "A longer deadline would let {where} in: {reason}.",
                       where=placement(e), reason=e.reason))
    pricey = [e for e in rec.excluded if e.kind in (ExclusionKind.BUDGET, ExclusionKind.PRICE)]
    if pricey:
        out.append(msg("change.budget", "A bigger budget would let in: {gpus}.",
                       gpus=Some(sorted({placement(e) for e in pricey}), 8)))
    fix = _memory_fix(rec, best, offers, rates, profile)
    if fix:
        out.append(fix)
    no_offer = sorted({e.gpu.id for e in rec.excluded if e.kind == ExclusionKind.OFFER
                       and not e.has_offer})
    if no_offer:
        out.append(msg("change.no_offer", "Fits but has no offer in this price list: {gpus} "
                       "(another {prices} may change the answer).", gpus=Some(no_offer, 8),
                       prices=Field("prices")))
    return out


def price_to_win(rec: Recommendation) -> tuple[Option, Any, Any] | None:
    """(the best option on another GPU, its price per GPU-hour that would make it win, its
    price now), when ranking on cost and the two are not tied; else None."""
    from whichgpu.advise.ranking import rank_cost

    opts, job = rec.options, rec.job
    if job.objective != Objective.COST or not opts:
        return None
    best = opts[0]
    runner = next((o for o in opts if o.gpu.id != best.gpu.id), None)
    if runner is None or rank_cost(job, runner) <= 0:
        return None
    ratio = rank_cost(job, best) / rank_cost(job, runner)
    now = runner.price_per_hour / runner.gpus  # per GPU, as offers are listed
    target = now * ratio
    if ratio >= 0.995 or format_money(target) == format_money(now):
        return None
    return runner, target, now


def _memory_fix(rec: Recommendation, best: Option, offers: list[Any], rates: Any,
                profile: Any) -> Message | None:
    """A change to the job (a smaller format, a shorter context, checkpointing ...) that lets
    in a GPU size which does not fit as asked and would then beat the winner: each change is
    costed on that GPU's offers, within --max-gpus; the best such change is named."""
    from whichgpu.advise.evaluate import evaluate
    from whichgpu.advise.options import Option
    from whichgpu.advise.ranking import rank_cost
    from whichgpu.errors import InputError

    job = rec.job

    def aim(o: Option) -> float:
        if job.objective == Objective.COST:
            return rank_cost(job, o)
        return o.time_s.typical if o.time_s else -o.rate.typical

    target = aim(best)
    found = None
    seen = set()
    # the changes for a GPU do not depend on its count: asked once per GPU
    changes: dict[str, list[Any]] = {}
    for e in sorted(rec.excluded, key=lambda e: e.gap):
        if e.kind != ExclusionKind.MEMORY or not e.has_offer or (e.gpu.id, e.count) in seen:
            continue
        seen.add((e.gpu.id, e.count))
        if e.gpu.id not in changes:
            changes[e.gpu.id] = suggestions(job.workload, e.gpu)
        for c in changes[e.gpu.id]:
            changed = c.workload
            if changed.task != job.workload.task and job.workload.task == Task.PRETRAIN:
                continue  # LoRA is not pre-training
            if changed is job.workload or not c.kind.changes_the_job:
                continue  # more GPUs or another GPU: not a change to the job
            try:
                option = evaluate(replace(job, workload=changed), e.gpu, e.count, offers,
                                  rec.currency, rates=rates, profile=profile,
                                  max_gpus=rec.max_gpus)
            except InputError:  # a change the estimators refuse is no answer
                continue
            if not isinstance(option, Option) or aim(option) >= target:
                continue
            if found is None or aim(option) < aim(found[1]):
                found = (c, option, e)
        if len(seen) >= 6:
            break
    if found is None:
        return None
    c, o, e = found
    result = (msg("change.memory_fix.job", "{cost} in {time}", cost=o.cost.typical,
                  time=Duration(o.time_s.typical)) if o.time_s is not None else
              msg("change.memory_fix.hour", "{price}/h", price=o.price_per_hour))
    return msg("change.memory_fix", "{where} does not fit as asked ({short}); with {change} it "
               "would ({need:.1f} GB per GPU) and win: {result}.", where=placement(e),
               short=short(e), change=c.description, need=o.memory_bytes / 1e9, result=result)


def short(e: Exclusion) -> Message:
    gb = e.shortfall / 1e9
    return (msg("change.short", "{gb:.1f} GB short", gb=gb) if gb >= 1 else
            msg("change.short.small", "{gb:.2f} GB short", gb=gb))


def _memory_fixes(rec: Recommendation, catalog: Any) -> list[Message]:
    """Nothing runs: what would. GPUs that hold the job but have no offer; then the single
    changes that make it fit, first on GPUs the price list rents (within --max-gpus and
    --only), naming the ones that would hold it but have no offer."""
    w = rec.job.workload
    allowed = set(rec.only) if rec.only else None
    counts = tuple(n for n in COUNTS if rec.max_gpus is None or n <= rec.max_gpus)
    rented_gpus = [g for g in (catalog.gpus if catalog else []) if g.id in rec.offered
                   and (allowed is None or g.id in allowed)]
    out: list[Message] = []
    no_offer = sorted({placement(e) for e in rec.excluded if e.kind == ExclusionKind.OFFER
                       and not e.has_offer})
    if no_offer:
        out.append(msg("change.fits_unrented.spot", "It fits on {gpus}, which have no spot "
                       "offer in this price list: another {prices} or on-demand (no {spot}) "
                       "may change the answer.", gpus=Some(no_offer, 8), prices=Field("prices"),
                       spot=Field("spot")) if rec.job.spot else
                   msg("change.fits_unrented", "It fits on {gpus}, which have no offer in "
                       "this price list: another {prices} may change the answer.",
                       gpus=Some(no_offer, 8), prices=Field("prices")))
    for c in suggestions(w, None, catalog=catalog):
        rented: list[Placement] = []
        if rented_gpus and counts:
            seen: set[str] = set()
            for f in fits(c.workload, catalog=catalog, counts=counts, gpus=rented_gpus):
                if f.fits and f.gpu.id not in seen:
                    seen.add(f.gpu.id)
                    rented.append(Placement(f.gpu.id, f.count))
        unrented = [p for p in c.fits_on
                    if p.gpu not in rec.offered and (allowed is None or p.gpu in allowed)
                    and (rec.max_gpus is None or p.count <= rec.max_gpus)]
        if not rented and (not unrented or no_offer):
            continue
        total = c.total_bytes / 1e9
        if rented and unrented:
            out.append(msg("change.fix.both", "{change}: {gb:.1f} GB per GPU, fits {rented}; "
                           "also {unrented} (no offer in this price list)", change=c.description,
                           gb=total, rented=Some(rented, 4), unrented=Some(unrented, 6)))
        elif rented:
            out.append(msg("change.fix.rented", "{change}: {gb:.1f} GB per GPU, fits {rented}",
                           change=c.description, gb=total, rented=Some(rented, 4)))
        else:
            out.append(msg("change.fix.unrented", "{change}: {gb:.1f} GB per GPU, fits only "
                           "{unrented} (no offer in this price list)", change=c.description,
                           gb=total, unrented=Some(unrented, 6)))
        if len(out) == 5:
            break
    if rec.max_gpus is not None:
        more = [f for f in fits(w, catalog=catalog, counts=COUNTS[1:])
                if f.fits and f.count > rec.max_gpus and f.gpu.id in rec.offered
                and (allowed is None or f.gpu.id in allowed)]
        if more:
            f = more[0]
            out.append(msg("change.more_gpus", "More GPUs: {where} hold it as asked ({gb:.1f} "
                           "GB per GPU; {flag}).", where=Placement(f.gpu.id, f.count),
                           gb=f.per_gpu_bytes / 1e9, flag=Field("max_gpus", f.count)))
    return out
