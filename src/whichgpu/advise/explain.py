"""Why the first choice wins, why the others were excluded, what would change the answer."""

from __future__ import annotations

from whichgpu.listing import join_some
from whichgpu.units import format_duration, format_money


def _money_range(r) -> str:
    return f"{format_money(r.typical)} ({format_money(r.low)}-{format_money(r.high)})"


def _what(o) -> str:
    if o.time_s is None:
        if o.unit_cost is not None and o.unit:
            return (f"{_money_range(o.unit_cost)} per {o.unit} at "
                    f"{format_money(o.price_per_hour)}/h")
        return f"{format_money(o.cost.typical)} per hour"
    spot = ""
    if getattr(o.spot_risk, "cost", None) is not None:  # issue 19
        from whichgpu.advise.spot_risk import expected_phrase

        spot = f" uninterrupted (on spot, {expected_phrase(o.spot_risk)})"
    return (f"about {format_duration(o.time_s.typical)} "
            f"({format_duration(o.time_s.low)}-{format_duration(o.time_s.high)}) and "
            f"{_money_range(o.cost)}{spot}")


def _name(o) -> str:
    """An option's label, with its layout when it has several replicas (two '8 x a100' can
    be 4 replicas of 2 GPUs or 2 of 4)."""
    return f"{o.label} ({o.layout})" if o.replicas > 1 else o.label


def _per_gpu_speed(o) -> float:
    """Work per second per GPU (times such as seconds per step are inverted)."""
    r = o.rate.typical
    if o.rate_name in ("step_s", "seconds_per_video"):
        r = 1 / r if r > 0 else 0.0
    return r / o.gpus


def explain(rec, offers, catalog, rates, profile=None) -> None:
    """Fill ``rec.explanation``, ``rec.what_would_change`` and ``rec.closest`` in place."""
    from whichgpu.advise.recommend import rank_cost

    job = rec.job
    opts = rec.options
    lines: list[str] = []
    change: list[str] = []
    if opts:
        best = opts[0]
        at = f" at {format_money(best.price_per_hour)}/h" if best.time_s is not None else ""
        lines.append(f"{_name(best)} wins with the {_goal(rec)}: {_what(best)}{at} "
                     f"({best.offer.provider}, {best.offer.billing.describe()}).")
        if job.kind == "none":
            lines.append("No amount of work given: " + (
                f"ranked by the cost of the same work (per {best.unit}), shown with the price "
                "per hour." if rec.ranking.startswith("cost per") and best.unit and
                rec.ranking != "cost per hour" else
                "ranked by the price per hour of a configuration that holds it (add --tokens, "
                "--images, --steps ... to rank by the cost of a job)."))
        headroom = best.gpu.usable_memory_bytes - best.memory_bytes
        lines.append(f"Memory first: it needs {best.memory_bytes / 1e9:.1f} GB per GPU of "
                     f"{best.gpu.usable_memory_bytes / 1e9:.1f} GB ({headroom / 1e9:.1f} GB "
                     f"spare; {best.layout}). Speed second: {best.speed.bound}-bound at "
                     f"{best.speed.precision}, confidence {best.speed.confidence}.")
        if len(opts) > 1:
            second = opts[1]
            finishes = getattr(second.spot_risk, "finishes", (True,) * 3)[1]  # issue 19
            if job.objective == "cost" and rank_cost(job, best) > 0 and finishes:
                diff = rank_cost(job, second) / rank_cost(job, best) - 1
                lines.append(f"Next: {_name(second)}, {_what(second)} ({diff:+.0%} cost).")
            else:
                lines.append(f"Next: {_name(second)}, {_what(second)}.")
        ties = [_name(o) for o in opts[1:] if o.near_tie]
        if ties:
            lines.append(f"Near-tie (within 5 %): {', '.join(ties)}; the ranges overlap, so "
                         "prices on the day decide.")
        slower = _slower_but_cheaper(rec, best)
        if slower:
            lines.append(slower)
        lines.append(_counts_line(rec))
        no_fp8 = sorted({o.gpu.id for o in opts if o.lacks_fp8})
        if no_fp8:
            lines.append(f"Without FP8 or FP4 support ({', '.join(no_fp8)}), the weights run "
                         "through 16-bit matmuls: those cards are kept, with their slower "
                         "speed (a note, not an exclusion).")
        for note in best.notes:
            if not note.startswith(("no FP8", "no FP4")):
                lines.append(f"Note: {note}.")
        for a in best.assumptions:
            lines.append(f"Assumes: {a}.")
        change += _what_changes(rec, best, offers, rates, profile)
    else:
        where = []
        if rec.only:
            where.append(f"among {', '.join(rec.only)}")
        if rec.max_gpus:
            where.append(f"with at most {rec.max_gpus} GPU(s)")
        lines.append("Nothing in the catalog and price list can run this job as asked"
                     + (f" ({'; '.join(where)})" if where else "") + ".")
        closest = closest_miss(rec.excluded)
        if closest is not None:
            rec.closest = f"{_where(closest)}: {closest.reason}" + (
                "" if closest.has_offer or closest.kind == "offer"
                else "; and the price list has no offer for it")
            lines.append(f"Closest: {rec.closest}.")
            if not closest.has_offer:
                offered = closest_miss([e for e in rec.excluded if e.has_offer])
                if offered is not None:
                    lines.append(f"Closest with an offer: {_where(offered)}: "
                                 f"{offered.reason}.")
        change += _memory_fixes(rec, catalog)
    rec.explanation = lines
    rec.what_would_change = change


def _goal(rec) -> str:
    r = rec.ranking
    return {"shortest time": "shortest time", "fastest per user": "fastest speed per user",
            "total cost": "lowest total cost"}.get(r, f"lowest {r}")


def _where(e) -> str:
    return e.gpu.id if e.count == 1 else f"{e.count} x {e.gpu.id}"


def excluded_counts(rec) -> tuple[int, int, int]:
    """(GPUs that cannot run the job at any size tried, how many of those the price list does
    not rent, smaller sizes excluded of GPUs that do run it with more cards)."""
    with_options = {o.gpu.id for o in rec.options}
    gpus = {e.gpu.id for e in rec.excluded if e.gpu.id not in with_options}
    no_offer = {e.gpu.id for e in rec.excluded if e.gpu.id in gpus and not e.has_offer}
    smaller = sum(1 for e in rec.excluded if e.gpu.id in with_options)
    return len(gpus), len(no_offer), smaller


def _counts_line(rec) -> str:
    gpus, no_offer, smaller = excluded_counts(rec)
    text = f"{len(rec.options)} configuration(s) can run it. Excluded: {gpus} GPU(s)"
    if no_offer:
        text += f" ({no_offer} of them not in this price list)"
    if smaller:
        text += (f", and {smaller} smaller size(s) of GPUs that run it with more cards")
    return text + "."


def _per_gpu_price(o) -> float:
    """The option's price per GPU-hour paid: its whole instances over the GPUs they hold (an
    option on one GPU of an 8-GPU instance pays for eight)."""
    from whichgpu.cost.billing import instances_needed

    paid = instances_needed(o.offer, o.count) * o.offer.gpu_count * o.replicas
    return o.price_per_hour.amount / max(paid, 1)


def _slower_but_cheaper(rec, best) -> str | None:
    """Why a slower card wins on cost: the faster cards cost more per GPU-hour than they gain
    per GPU. Compared at the same number of GPUs where there is one (scaling changes speed
    per GPU), on the same pricing (spot with spot), and per GPU-hour paid."""
    if rec.job.objective != "cost" or rec.job.per_hour:
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
    at = f" (both on {best.gpus} GPUs)" if f.gpus == best.gpus and best.gpus > 1 else ""
    return (f"Per GPU{at}, {f.gpu.id} is {speed_ratio:.1f}x as fast as {best.gpu.id} but costs "
            f"{price_ratio:.1f}x as much per hour for each GPU paid here, so {best.gpu.id} does "
            "the same work for less; the faster card wins when time counts (--objective time, "
            "--deadline, --max-gpus).")


def closest_miss(excluded):
    """The exclusion nearest to working: the smallest gap relative to what was needed
    (memory short, time late, money over, speed missing)."""
    if not excluded:
        return None
    # a card that cannot run the engine asked for is not "nearly" working, whatever its gap
    return min(excluded, key=lambda e: (e.kind == "engine", e.gap, e.count))


def _what_changes(rec, best, offers, rates, profile) -> list[str]:
    from whichgpu.advise.recommend import rank_cost

    job = rec.job
    out: list[str] = []
    opts = rec.options
    timed = [o for o in opts if o.time_s is not None]
    if job.objective == "cost" and best.time_s is not None and timed:
        fastest = min(timed, key=lambda o: o.time_s.typical)
        if fastest is not best:
            out.append(f"If time matters more: {_name(fastest)} takes "
                       f"{format_duration(fastest.time_s.typical)} for "
                       f"{format_money(fastest.cost.typical)} (--objective time).")
    elif job.objective == "time":
        cheapest = min(opts, key=lambda o: rank_cost(job, o))
        if cheapest is not best:
            out.append(f"If cost matters more: {_name(cheapest)} costs "
                       f"{format_money(cheapest.cost.typical)} and takes "
                       + (format_duration(cheapest.time_s.typical) if cheapest.time_s
                          else "the same hours") + " (--objective cost).")
    win = price_to_win(rec)
    if win is not None:
        runner, target, now = win
        per = " per GPU" if runner.gpus > 1 else ""
        out.append(f"{_name(runner)} would win below {format_money(target)}/h{per} "
                   f"(now {format_money(now)}/h{per}).")
    if best.gpus > 1:
        fewer = [o for o in opts if o.gpus < best.gpus]
        if fewer:
            o = min(fewer, key=lambda o: rank_cost(job, o)) if job.objective == "cost" \
                else fewer[0]
            out.append(f"On fewer GPUs: {_name(o)}, {_what(o)} (--max-gpus {o.gpus}).")
    late = [e for e in rec.excluded if e.kind == "deadline"]
    if late:
        e = min(late, key=lambda e: e.shortfall)
        out.append(f"A longer deadline would let {_where(e)} in: {e.reason}.")
    pricey = [e for e in rec.excluded if e.kind in ("budget", "price")]
    if pricey:
        out.append("A bigger budget would let in: "
                   f"{join_some(sorted({_where(e) for e in pricey}), 8)}.")
    fix = _memory_fix(rec, best, offers, rates, profile)
    if fix:
        out.append(fix)
    no_offer = sorted({e.gpu.id for e in rec.excluded if e.kind == "offer"})
    if no_offer:
        out.append(f"Fits but has no offer in this price list: {join_some(no_offer, 8)} "
                   "(another --prices may change the answer).")
    return out


def price_to_win(rec):
    """(the best option on another GPU, its price per GPU-hour that would make it win, its
    price now), when ranking on cost and the two are not tied; else None."""
    from whichgpu.advise.recommend import rank_cost

    opts, job = rec.options, rec.job
    if job.objective != "cost" or not opts:
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


def _fixable_count(text: str) -> int:
    """'rtx-4090 x 2' -> 2, 'rtx-4090' -> 1."""
    _, _, n = text.rpartition(" x ")
    return int(n) if n.isdigit() else 1


def _memory_fix(rec, best, offers, rates, profile) -> str | None:
    """A change to the job (a smaller format, a shorter context, checkpointing ...) that lets
    in a GPU size which does not fit as asked and would then beat the winner: each change is
    costed on that GPU's offers, within --max-gpus; the best such change is named."""
    from dataclasses import replace

    from whichgpu.advise.recommend import Option, evaluate, rank_cost
    from whichgpu.errors import InputError
    from whichgpu.estimate.memory.fit import suggestions

    job = rec.job
    goal = (lambda o: rank_cost(job, o)) if job.objective == "cost" else \
        (lambda o: o.time_s.typical if o.time_s else -o.rate.typical)
    target = goal(best)
    found = None
    seen = set()
    for e in sorted(rec.excluded, key=lambda e: e.gap):
        if e.kind != "memory" or not e.has_offer or (e.gpu.id, e.count) in seen:
            continue
        seen.add((e.gpu.id, e.count))
        for c in suggestions(job.workload, e.gpu):
            changed = c.workload
            if changed.task != job.workload.task and job.workload.task == "pretrain":
                continue  # LoRA is not pre-training
            if changed is job.workload or "bigger GPU" in c.description or \
                    f" x {e.gpu.id} (" in c.description:
                continue  # more GPUs or another GPU: not a change to the job
            try:
                option = evaluate(replace(job, workload=changed), e.gpu, e.count, offers,
                                  rec.currency, rates=rates, profile=profile,
                                  max_gpus=rec.max_gpus)
            except InputError:  # a change the estimators refuse is no answer
                continue
            if not isinstance(option, Option) or goal(option) >= target:
                continue
            if found is None or goal(option) < goal(found[1]):
                found = (c, option, e)
        if len(seen) >= 6:
            break
    if found is None:
        return None
    c, o, e = found
    what = (f"{format_money(o.cost.typical)} in {format_duration(o.time_s.typical)}"
            if o.time_s is not None else f"{format_money(o.price_per_hour)}/h")
    return (f"{_where(e)} does not fit as asked ({_short(e)}); with {c.description} it would "
            f"({o.memory_bytes / 1e9:.1f} GB per GPU) and win: {what}.")


def _short(e) -> str:
    gb = e.shortfall / 1e9
    return f"{gb:.1f} GB short" if gb >= 1 else f"{gb:.2f} GB short"


def _memory_fixes(rec, catalog) -> list[str]:
    """Nothing runs: what would. GPUs that hold the job but have no offer; then the single
    changes that make it fit, first on GPUs the price list rents (within --max-gpus and
    --only), naming the ones that would hold it but have no offer."""
    from whichgpu.estimate.memory.fit import COUNTS, fits, suggestions

    w = rec.job.workload
    allowed = set(rec.only) if rec.only else None
    counts = tuple(n for n in COUNTS if rec.max_gpus is None or n <= rec.max_gpus)
    rented_gpus = [g for g in (catalog.gpus if catalog else []) if g.id in rec.offered
                   and (allowed is None or g.id in allowed)]
    out = []
    no_offer = sorted({_where(e) for e in rec.excluded if e.kind == "offer"})
    if no_offer:
        pricing = "spot " if rec.job.spot else ""
        instead = " or on-demand (no --spot)" if rec.job.spot else ""
        out.append(f"It fits on {join_some(no_offer, 8)}, which have no {pricing}offer in "
                   f"this price list: another --prices{instead} may change the answer.")

    def place(gpu_id: str, n: int) -> str:
        return gpu_id if n == 1 else f"{gpu_id} x {n}"

    for c in suggestions(w, None, catalog=catalog):
        rented: list[str] = []
        if rented_gpus and counts:
            seen: set[str] = set()
            for f in fits(c.workload, catalog=catalog, counts=counts, gpus=rented_gpus):
                if f.fits and f.gpu.id not in seen:
                    seen.add(f.gpu.id)
                    rented.append(place(f.gpu.id, f.count))
        unrented = []
        for p in c.fits_on:
            gpu = p.rpartition(" x ")[0] or p
            if gpu in rec.offered or (allowed is not None and gpu not in allowed) or \
                    (rec.max_gpus is not None and _fixable_count(p) > rec.max_gpus):
                continue
            unrented.append(p)
        if not rented and (not unrented or no_offer):
            continue
        text = f"{c.description}: {c.total_bytes / 1e9:.1f} GB per GPU"
        if rented:
            text += f", fits {join_some(rented, 4)}"
        if unrented:
            text += ("; also " if rented else ", fits only ") + \
                f"{join_some(unrented, 6)} (no offer in this price list)"
        out.append(text)
        if len(out) == 5:
            break
    if rec.max_gpus is not None:
        more = [f for f in fits(w, catalog=catalog, counts=COUNTS[1:])
                if f.fits and f.count > rec.max_gpus and f.gpu.id in rec.offered
                and (allowed is None or f.gpu.id in allowed)]
        if more:
            f = more[0]
            out.append(f"More GPUs: {f.count} x {f.gpu.id} hold it as asked "
                       f"({f.per_gpu_bytes / 1e9:.1f} GB per GPU; --max-gpus {f.count}).")
    return out
