"""Why the first choice wins, why the others were excluded, what would change the answer."""

from __future__ import annotations

from whichgpu.units import format_duration, format_money

_KIND_ORDER = ("memory", "offer", "price", "deadline", "budget", "speed")


def _what(o) -> str:
    if o.time_s is None:
        return f"{format_money(o.cost.typical)} per hour"
    return (f"about {format_duration(o.time_s.typical)} "
            f"({format_duration(o.time_s.low)}-{format_duration(o.time_s.high)}) and "
            f"{format_money(o.cost.typical)} ({format_money(o.cost.low)}-"
            f"{format_money(o.cost.high)})")


def explain(rec, offers, catalog, rates) -> None:
    """Fill ``rec.explanation``, ``rec.what_would_change`` and ``rec.closest`` in place."""
    job = rec.job
    opts = rec.options
    lines: list[str] = []
    change: list[str] = []
    if opts:
        best = opts[0]
        goal = "the lowest total cost" if job.objective == "cost" else "the shortest time"
        if job.per_hour:
            goal = ("the lowest cost per hour" if job.objective == "cost"
                    else "the fastest per user")
        lines.append(f"{best.label} wins with {goal}: {_what(best)} at "
                     f"{format_money(best.price_per_hour)}/h ({best.offer.provider}, "
                     f"{best.offer.billing.describe()}).")
        headroom = best.gpu.usable_memory_bytes - best.memory_bytes
        lines.append(f"Memory first: it needs {best.memory_bytes / 1e9:.1f} GB per GPU of "
                     f"{best.gpu.usable_memory_bytes / 1e9:.1f} GB ({headroom / 1e9:.1f} GB "
                     f"spare). Speed second: {best.speed.bound}-bound at {best.speed.precision}"
                     f", confidence {best.speed.confidence}.")
        if len(opts) > 1:
            second = opts[1]
            if job.objective == "cost":
                diff = second.cost.typical.amount / best.cost.typical.amount - 1
                lines.append(f"Next: {second.label}, {_what(second)}"
                             f" ({diff:+.0%} cost).")
            else:
                lines.append(f"Next: {second.label}, {_what(second)}.")
        ties = [o.label for o in opts[1:] if o.near_tie]
        if ties:
            lines.append(f"Near-tie (within 5 %): {', '.join(ties)}; the ranges overlap, so "
                         "prices on the day decide.")
        lines.append(f"{len(opts)} configuration(s) can run it; {len(rec.excluded)} GPU(s) "
                     "excluded.")
        for note in best.notes:
            lines.append(f"Note: {note}.")
        change += _what_changes(rec, best)
    else:
        lines.append("Nothing in the catalog and price list can run this job as asked.")
        closest = _closest(rec)
        if closest is not None:
            rec.closest = f"{closest.gpu.id} x {closest.count}: {closest.reason}"
            lines.append(f"Closest: {rec.closest}.")
        change += _memory_fixes(rec, catalog)
    rec.explanation = lines
    rec.what_would_change = change


def _closest(rec):
    """The exclusion nearest to working: deadline/budget misses first, then the smallest gap."""
    if not rec.excluded:
        return None
    soft = [e for e in rec.excluded if e.kind in ("deadline", "budget", "price", "speed")]
    if soft:
        return min(soft, key=lambda e: e.shortfall)
    mem = [e for e in rec.excluded if e.kind == "memory"]
    if mem:
        return min(mem, key=lambda e: e.shortfall / e.gpu.usable_memory_bytes)
    return rec.excluded[0]


def _what_changes(rec, best) -> list[str]:
    job = rec.job
    out: list[str] = []
    opts = rec.options
    if job.objective == "cost" and best.time_s is not None:
        fastest = min(opts, key=lambda o: o.time_s.typical if o.time_s else float("inf"))
        if fastest is not best and fastest.time_s is not None:
            out.append(f"If time matters more: {fastest.label} takes "
                       f"{format_duration(fastest.time_s.typical)} for "
                       f"{format_money(fastest.cost.typical)} (--objective time).")
    elif job.objective == "time":
        cheapest = min(opts, key=lambda o: o.cost.typical.amount)
        if cheapest is not best:
            out.append(f"If cost matters more: {cheapest.label} costs "
                       f"{format_money(cheapest.cost.typical)} and takes "
                       + (format_duration(cheapest.time_s.typical) if cheapest.time_s
                          else "the same hours") + " (--objective cost).")
    if len(opts) > 1 and job.objective == "cost":
        second = opts[1]
        ratio = best.cost.typical.amount / max(second.cost.typical.amount, 1e-12)
        target = second.price_per_hour * ratio
        out.append(f"{second.label} would win below {format_money(target)}/h "
                   f"(now {format_money(second.price_per_hour)}/h).")
    late = [e for e in rec.excluded if e.kind == "deadline"]
    if late:
        e = min(late, key=lambda e: e.shortfall)
        out.append(f"A longer deadline would let {e.gpu.id} in: {e.reason}.")
    pricey = [e for e in rec.excluded if e.kind in ("budget", "price")]
    if pricey:
        out.append(f"A bigger budget would let in: {', '.join(sorted({e.gpu.id for e in pricey}))}"
                   ".")
    cheaper_mem = [e for e in rec.excluded if e.kind == "memory"
                   and e.gpu.id != best.gpu.id]
    if cheaper_mem:
        from whichgpu.estimate.memory.fit import suggestions

        e = min(cheaper_mem, key=lambda e: e.shortfall / e.gpu.usable_memory_bytes)
        fixes = [c for c in suggestions(job.workload, e.gpu) if c.fits_on
                 and "bigger GPU" not in c.description]
        if fixes:
            out.append(f"{e.gpu.id} does not fit as asked; with {fixes[0].description} it would"
                       f" ({fixes[0].total_bytes / 1e9:.1f} GB).")
    no_offer = sorted({e.gpu.id for e in rec.excluded if e.kind == "offer"})
    if no_offer:
        out.append(f"Fits but has no offer in this price list: {', '.join(no_offer)} "
                   "(another --prices may change the answer).")
    return out


def _memory_fixes(rec, catalog) -> list[str]:
    from whichgpu.estimate.memory.fit import suggestions

    fixes = suggestions(rec.job.workload, None, catalog=catalog)
    return [f"{c.description}: {c.total_bytes / 1e9:.1f} GB per GPU"
            + (f", fits {', '.join(c.fits_on)}" if c.fits_on else "") for c in fixes[:5]]
