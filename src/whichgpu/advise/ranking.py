"""How options are ranked: by the objective (a spot option by its expected cost, a job
with no amount by its cost per unit of work), near-ties and the Pareto front flagged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.advise.job import Job
from whichgpu.cost.billing import MoneyRange
from whichgpu.vocabulary import WorkKind

if TYPE_CHECKING:
    from whichgpu.advise.options import Option

NEAR_TIE = 0.05  # options within 5 % of the best are shown as near-ties


def _unit_ranked(job: Job) -> bool:
    """No amount of work for a job that ends (training, images, videos): the options are
    ranked by what the same work costs (per 1M tokens, per 1,000 images), not by the hour."""
    w = job.workload
    return job.kind == WorkKind.NONE and (w.is_training or w.is_diffusion)


def _rank_key(job: Job, o: Option) -> tuple[float, float]:
    """What the ranking sorts one option by: (cost, time), or (time, cost) for time."""
    cost, time = rank_cost(job, o), _time_of(o)
    return (time, cost) if job.objective == "time" else (cost, time)


def _time_of(o: Option) -> float:
    if getattr(o.spot_risk, "expected_time_s", None) is not None:
        return o.spot_risk.expected_time_s.typical
    if o.time_s is not None:
        return o.time_s.typical
    if o.serving is not None:  # a request rate: every option serves the same demand, so its
        # rate orders nothing (equal costs fell back to the catalog's order: an RTX 4090 slower
        # on TPOT and TTFT ranked above an RTX 5090); the latency each user gets does, as in
        # the cost/latency front (advise/serving.py _latency_front): TPOT, then TTFT
        return o.serving["tpot_s"]["typical"]
    return -o.rate.typical  # serving and no amount: faster is better


def _first_token(o: Option) -> float:
    """A serving option's mean TTFT (the tie-break after TPOT); 0 for any other option."""
    return o.serving["ttft_s"]["typical"] if o.serving is not None else 0.0


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


def shown_cost(amount: float) -> float:
    """A cost as the ranking compares it: to 4 significant figures, as the answer shows it."""
    return float(f"{amount:.4g}")


def _rank(job: Job, options: list[Option]) -> None:
    """Sort by the objective (ties broken by the other), flag near-ties and the Pareto front."""
    # each option's (cost, time), worked out once (the Pareto test compares every pair)
    keys = {id(o): (rank_cost(job, o), _time_of(o)) for o in options}
    # sorted by the cost as shown (4 significant figures): costs that differ in a fraction of
    # a cent (per-second billing of 2, 5 or 8 machines for the same GPU-hours) are the same
    # cost to the reader, and the faster option comes first (was: 6 x rtx-6000-ada for 10,000
    # FLUX images ranked above 7 x, at $16.92 both and an hour slower)
    shown = {k: shown_cost(c) for k, (c, _) in keys.items()}

    def cost_of(o: Option) -> float:
        return shown[id(o)]

    def time_of(o: Option) -> float:
        return keys[id(o)][1]

    if job.objective == "time":
        options.sort(key=lambda o: (time_of(o), cost_of(o), _first_token(o), o.gpus))
    else:
        options.sort(key=lambda o: (cost_of(o), time_of(o), _first_token(o), o.gpus))
    if not options:
        return
    best = options[0]
    front = pareto_front([keys[id(p)] for p in options])
    for i, o in enumerate(options):
        near = False
        if i > 0:
            if job.objective == "time" and best.time_s is not None and o.time_s is not None:
                near = o.time_s.typical <= best.time_s.typical * (1 + NEAR_TIE)
            elif job.objective == "cost":
                near = cost_of(o) <= cost_of(best) * (1 + NEAR_TIE)
        options[i] = _flagged(o, near, front[i])


def _flagged(o: Option, near: bool, pareto: bool) -> Option:
    """``replace(o, near_tie=near, pareto=pareto)`` without its per-call introspection (an
    Option has no __post_init__ and every field is an init field: a copy of its fields)."""
    new = object.__new__(type(o))
    new.__dict__.update(o.__dict__)
    new.__dict__["near_tie"] = near
    new.__dict__["pareto"] = pareto
    return new


def _dominated(pairs: list[tuple[float, float]], c: float, t: float) -> bool:
    """Whether a (cost, time) of ``pairs`` is no worse than (c, t) on both and better on one."""
    return any(pc <= c and pt <= t and (pc < c or pt < t) for pc, pt in pairs)


def pareto_front(pairs: list[tuple[float, float]]) -> list[bool]:
    """For each (cost, time), whether no other pair is no worse on both and better on one
    (:func:`_dominated`, which every pair compared with every other would say), in
    O(n log n): (c, t) is dominated exactly when a pair of lower cost has a time <= t, or a
    pair of the same cost a time < t. Pairs with a NaN (unordered) are compared pairwise."""
    if any(c != c or t != t for c, t in pairs):
        return [not _dominated(pairs, c, t) for c, t in pairs]
    order = sorted(range(len(pairs)), key=lambda i: pairs[i][0])
    out = [True] * len(pairs)
    lower: float | None = None  # the least time of the pairs of lower cost seen so far
    i = 0
    while i < len(order):
        cost = pairs[order[i]][0]
        j = i
        while j < len(order) and pairs[order[j]][0] == cost:
            j += 1
        group = [order[k] for k in range(i, j)]
        least = min(pairs[k][1] for k in group)
        for k in group:
            t = pairs[k][1]
            out[k] = not ((lower is not None and lower <= t) or least < t)
        lower = least if lower is None else min(lower, least)
        i = j
    return out
