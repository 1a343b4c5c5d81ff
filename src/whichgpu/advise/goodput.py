"""Goodput ranks serving (issue 28, item 3): when a TTFT or TPOT target is set at a
percentile (``--ttft 300ms@p95``), the options for a request rate are ranked by the requests
that meet the targets per unit of cost, not by the price alone.

Goodput is DistServe's (Zhong et al., OSDI 2024, section 2): the requests per second that meet
*every* latency target. Each option's replicas are already sized so that the chosen percentile
of each latency meets its own target (advise/serving.py); the share of requests that meet both
targets together can still be lower (the slow TTFTs and the slow TPOTs are not the same
requests), and it differs between options whose replicas run at different loads. A layout
that is cheaper per hour but lets more requests miss a target can so serve fewer good requests
per unit of cost: that layout loses here.

The share comes from the same simulated run (estimate/speed/serving_sim.py) that reports the
option's percentiles, at the rate each of its replicas is sent.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from whichgpu.advise.targets import Targets
from whichgpu.messages import msg
from whichgpu.vocabulary import Objective, WorkKind

if TYPE_CHECKING:
    from whichgpu.advise.job import Job
    from whichgpu.advise.options import Option, Recommendation
    from whichgpu.messages import Message

#: Options whose cost per good request is within this share of the best are near-ties (the
#: same threshold as the cost ranking's, advise/ranking.py NEAR_TIE).
NEAR_TIE = 0.05


def targets_of(job: Job) -> Targets | None:
    """The job's targets when it is a request rate, else None."""
    if job.kind != WorkKind.RATE or job.requests_per_s is None:
        return None
    return Targets(job.requests_per_s, job.ttft_s, job.tpot_s, job.ttft_pct, job.tpot_pct)


def ranks_on_goodput(job: Job) -> bool:
    """Whether goodput ranks this job's options: a request rate with a target at a
    percentile, ranked by cost (``--objective time`` keeps its latency ranking)."""
    targets = targets_of(job)
    return (targets is not None and targets.at_percentile
            and job.objective != Objective.TIME)


def goodput_of(run: Any, targets: Targets, replicas: int) -> dict[str, float]:
    """An option's goodput from its simulated run (serving_sim.TrafficResult) at one
    replica's rate: the share of requests meeting every target, and the requests/s of all
    ``replicas`` that meet them."""
    per_replica = run.goodput(targets.ttft_s, targets.tpot_s)
    share = per_replica / run.requests_per_s if run.requests_per_s > 0 else 0.0
    return {"share_meeting_targets": round(share, 4),
            "requests_per_s": round(share * targets.requests_per_s, 6)}


def cost_per_good_request(job: Job, o: Option) -> float:
    """What goodput ranks by: the option's hourly cost (a spot option's expected cost) over
    the requests per hour that meet the targets; infinite when none does."""
    from whichgpu.advise.ranking import rank_cost

    good = (o.serving or {}).get("goodput", {}).get("requests_per_s", 0.0)
    return rank_cost(job, o) / (good * 3600) if good > 0 else math.inf


def layout_key(job: Job, o: Option, cost: float) -> float:
    """What picks one GPU's layout among its sizes: ``cost`` (its hourly cost), or per
    request meeting the targets when goodput ranks the job (as ``rank`` does across GPUs)."""
    if not ranks_on_goodput(job):
        return cost
    good = (o.serving or {}).get("goodput", {}).get("requests_per_s", 0.0)
    return cost / (good * 3600) if good > 0 else math.inf


def rank(job: Job, options: list[Option]) -> list[Option]:
    """``options`` ranked by goodput per unit of cost when the job asks for it (unchanged
    otherwise), each with its good requests per unit of cost in ``serving['goodput']`` and
    the near-ties flagged on that key."""
    if not ranks_on_goodput(job) or not options:
        return options
    key = {id(o): cost_per_good_request(job, o) for o in options}
    options = sorted(options, key=lambda o: (key[id(o)], o.price_per_hour.amount, o.gpus))
    best = key[id(options[0])]
    out = []
    for i, o in enumerate(options):
        k = key[id(o)]
        good = dict((o.serving or {}).get("goodput", {}))
        good["requests_per_unit_cost"] = round(1 / k, 3) if k > 0 and math.isfinite(k) else 0.0
        good["currency"] = o.price_per_hour.currency
        near = i > 0 and math.isfinite(best) and k <= best * (1 + NEAR_TIE)
        out.append(replace(o, serving={**(o.serving or {}), "goodput": good}, near_tie=near))
    return out


def explanation(rec: Recommendation) -> list[Message]:
    """The line that says goodput ranked the options and why the winner won on it."""
    if not ranks_on_goodput(rec.job) or not rec.options:
        return []
    best = rec.options[0]
    good = best.serving["goodput"] if best.serving else {}
    lines: list[Message] = [msg(
        "goodput.ranked", "Ranked by goodput per cost: the requests that meet every target "
        "(simulated), per {currency} spent. On {gpu}, {share:.1%} of the requests meet them: "
        "{per:,.0f} good requests per {currency}.", currency=best.price_per_hour.currency,
        gpu=best.gpu.id, share=good.get("share_meeting_targets", 0.0),
        per=good.get("requests_per_unit_cost", 0.0))]
    from whichgpu.advise.ranking import rank_cost

    cheaper = min(rec.options, key=lambda o: (rank_cost(rec.job, o), o.gpus))
    if cheaper is not best and cheaper.serving:
        lost = cheaper.serving["goodput"]
        lines.append(msg(
            "goodput.cheaper_loses", "{gpu} costs less per hour but only {share:.1%} of its "
            "requests meet every target ({per:,.0f} good requests per {currency}).",
            gpu=cheaper.gpu.id, share=lost.get("share_meeting_targets", 0.0),
            per=lost.get("requests_per_unit_cost", 0.0), currency=cheaper.price_per_hour.currency))
    return lines
