"""Spot options in the recommender: the expected cost a spot offer is ranked by, and why.

``cost/spot.py`` models interruptions; this module feeds it what the recommender knows about
one option (the job's kind, its uninterrupted time, the bytes a checkpoint and a restart move)
and words the comparison with on-demand for the explanation.
"""

from __future__ import annotations

import math
from functools import cache
from typing import TYPE_CHECKING

from whichgpu.cost.spot import SpotEstimate, SpotServing, expected_run, serving_on_spot
from whichgpu.units import Range, format_duration, format_money

if TYPE_CHECKING:
    from whichgpu.advise.job import Job
    from whichgpu.advise.recommend import Recommendation
    from whichgpu.catalog.offers import Offer
    from whichgpu.estimate.speed import SpeedEstimate
    from whichgpu.estimate.workload import Workload
    from whichgpu.units import Money

SpotRisk = SpotEstimate | SpotServing
#: Trainers that save resumable checkpoints only at the end of an epoch. torchtune 0.6.1 (its
#: latest release, April 2025): "Optimizer State and recipe state ... are only saved at the
#: end of a given epoch ... Mid-epoch checkpointing is currently not supported" (docstring of
#: recipes/lora_finetune_single_device.py and the other fine-tuning recipes, pytorch/torchtune
#: tag v0.6.1). Its main branch added save_every_n_steps after that release (commit e43b6e6,
#: July 2025), unreleased, and the LoRA recipes skip it in the last epoch. A one-epoch run (the
#: export's) therefore restarts from the beginning after an interruption.
EPOCH_END_SAVERS = {"torchtune": "torchtune 0.6.1 saves resumable checkpoints only at the end "
                                 "of each epoch (pytorch/torchtune v0.6.1, the fine-tuning "
                                 "recipes' docstrings)"}
_CHECKPOINTED = ("adapter_weights", "optimizer_states", "master_weights")
_DEFAULT_OUTPUT_TOKENS = 256  # a request's output when the job does not say (per-item loss)


@cache
def job_bytes(wl: Workload) -> tuple[float, float]:
    """(bytes one checkpoint writes, bytes a restart reads) for ``wl`` on all its GPUs."""
    from whichgpu.estimate.memory import estimate_memory

    est = estimate_memory(wl)
    sharded = wl.gpus if (wl.zero_stage or wl.tp_degree > 1 or wl.pp_degree > 1) else 1
    ckpt = 0.0
    if wl.is_training:
        names = _CHECKPOINTED + (("weights",) if wl.task in ("full-ft", "pretrain") else ())
        ckpt = sum(est.term(n) for n in names) * sharded
    weights = est.term("weights") * (wl.tp_degree * wl.pp_degree)
    return ckpt, weights + ckpt


def checkpoint_interval(job: Job, wl: Workload) -> tuple[float | None, str | None]:
    """The checkpoint interval the spot estimate can count on, and why it differs from the
    job's (a trainer that saves only at epoch ends runs this job as one epoch)."""
    every = job.checkpoint_every_s
    if every is None or not wl.framework:
        return every, None
    from whichgpu.estimate.frameworks import canonical

    why = EPOCH_END_SAVERS.get(canonical(wl.framework))
    if why is None:
        return every, None
    return None, (f"{why}: this run is one epoch, so an interruption restarts it from the "
                  f"beginning; the spot estimate counts no checkpoints (not one every "
                  f"{format_duration(every)})")


def _item_s(job: Job, wl: Workload, speed: SpeedEstimate) -> Range | None:
    """Seconds one inference item takes (an image, a video, a request's output)."""
    if "images_per_min" in speed.rates and job.kind == "images":
        return speed.rates["images_per_min"].inverse(60.0)
    if "seconds_per_video" in speed.times and job.kind == "videos":
        return speed.times["seconds_per_video"]
    per_seq = speed.rates.get("decode_tokens_per_s_per_sequence")
    if per_seq is not None and per_seq.low > 0:
        return per_seq.inverse(float(wl.output_tokens or _DEFAULT_OUTPUT_TOKENS))
    return None


def spot_risk(job: Job, wl: Workload, offer: Offer, count: int, replicas: int,
              seconds: Range | None, speed: SpeedEstimate, price_per_hour: Money,
              rates=None) -> SpotRisk | None:
    """The spot risk of one option (None for an on-demand offer, or a job with no amount),
    in the currency of ``price_per_hour``."""
    risk = _risk(job, wl, offer, count, replicas, seconds, speed, price_per_hour)
    if isinstance(risk, SpotEstimate):
        return risk.converted(price_per_hour.currency, rates)
    return risk


def _risk(job, wl, offer, count, replicas, seconds, speed, price_per_hour):
    if not offer.spot:
        return None
    ckpt, load = job_bytes(wl)
    if job.per_hour:  # serving: spares keep the service up
        return serving_on_spot(offer, price_per_hour / max(1, replicas), replicas,
                               load_bytes=load)
    if seconds is None:
        return None
    if wl.is_training:
        every, why = checkpoint_interval(job, wl)
        estimate = expected_run(offer, seconds, gpus=count, checkpoint_every_s=every,
                                checkpoint_bytes=ckpt, load_bytes=load)
        if why:
            from dataclasses import replace

            estimate = replace(estimate, assumptions=(why, *estimate.assumptions))
        return estimate
    # a daily volume runs its replicas independently: each loses only its items in flight
    work = seconds.scale(1 / replicas) if replicas > 1 else seconds
    estimate = expected_run(offer, work, gpus=count, load_bytes=load, kind="items",
                            item_s=_item_s(job, wl, speed))
    if replicas > 1:
        from dataclasses import replace

        estimate = replace(estimate, cost=estimate.cost.scale(replicas),
                           uninterrupted_cost=estimate.uninterrupted_cost.scale(replicas))
    return estimate


def expected_cost(risk: SpotRisk | None):
    """The MoneyRange an option with ``risk`` is ranked by (None: its own cost)."""
    if isinstance(risk, SpotEstimate):
        return risk.cost
    if isinstance(risk, SpotServing):
        return risk.cost_per_hour
    return None


def uninterrupted_cost(risk: SpotRisk | None):
    """The same option's cost without interruptions (None: no spot risk)."""
    if isinstance(risk, SpotEstimate):
        return risk.uninterrupted_cost
    if isinstance(risk, SpotServing):
        return risk.uninterrupted_per_hour
    return None


def cost_text(risk: SpotRisk, which: str = "typical") -> str:
    """One end of the expected cost for a table cell: '$12.81', or 'never ends' for a case
    that does not finish in practice (cost/spot.py NOT_IN_PRACTICE)."""
    i = ("low", "typical", "high").index(which)
    if isinstance(risk, SpotEstimate) and not risk.finishes[i]:
        return "never ends"
    cost = risk.cost if isinstance(risk, SpotEstimate) else risk.cost_per_hour
    return format_money(getattr(cost, which))


def range_text(risk: SpotRisk) -> str:
    """The expected cost in words: '$12.81 ($4.56-$20.10)'; the cases that do not finish in
    practice said so instead of a figure."""
    done = risk.finishes if isinstance(risk, SpotEstimate) else (True, True, True)
    cost = risk.cost if isinstance(risk, SpotEstimate) else risk.cost_per_hour
    low, typical, high = (format_money(m) for m in (cost.low, cost.typical, cost.high))
    if all(done):
        return f"{typical} ({low}-{high})"
    if done[1]:
        return f"{typical} ({low} to never finishing at the busy end of the interruption prior)"
    if done[0]:
        return f"no finish in practice ({low} at the calm end of the interruption prior)"
    return "no finish in practice, even at the calm end of the interruption prior"


def expected_phrase(risk: SpotRisk, per: str = "") -> str:
    """'expected $0.11 ($0.06-$0.23)' or 'not finishing in practice (...)'."""
    text = range_text(risk)
    if text.startswith("no finish"):
        return "not finishing" + text[len("no finish"):]
    return f"expected {text.replace(' (', per + ' (', 1)}"


def _verb(risk: SpotRisk, per: str) -> str:
    """'is expected to cost $0.11 (...)' or 'does not finish in practice (...)'."""
    text = range_text(risk)
    if text.startswith("no finish"):
        return "does not finish" + text[len("no finish"):]
    return f"is expected to cost {text.replace(' (', per + ' (', 1)}"


def expected_seconds(risk: SpotRisk) -> float | None:
    """The expected wall time (typical): infinite when it does not finish in practice, None
    for serving (open-ended)."""
    if not isinstance(risk, SpotEstimate):
        return None
    return risk.expected_time_s.typical if risk.finishes[1] else math.inf


def explain_spot(rec: Recommendation) -> list[str]:
    """What spot changed: the best spot option against the best on-demand one, and why the
    winner wins (a spot price above on-demand, or the interruptions)."""
    if not rec.job.spot:
        return []
    spot = [o for o in rec.options if o.offer.spot]
    plain = [o for o in rec.options if not o.offer.spot]
    if not spot:
        return ["No spot offer in this price list can run the job; the options are on-demand."]
    s = spot[0]
    lines = []
    risk = s.spot_risk
    per = "/h" if rec.job.per_hour else ""
    if isinstance(risk, SpotServing):
        lines.append(f"Spot replicas need spare capacity: {s.label} on spot runs "
                     f"{int(risk.spares.typical)} spare replica(s) "
                     f"({int(risk.spares.low)}-{int(risk.spares.high)}) to stay up "
                     f"{risk.target:.0%} of the time, about "
                     f"{format_money(risk.cost_per_hour.typical)}/h in all.")
    if not plain or risk is None:
        return lines
    p = plain[0]
    ec = expected_cost(risk)
    base = uninterrupted_cost(risk) or s.cost
    where = f"{s.label} on {s.offer.provider} spot at {format_money(s.price_per_hour)}/h"
    rival = (f"{p.label} on {p.offer.provider} on-demand at "
             f"{format_money(p.price_per_hour)}/h")
    if rec.options.index(s) < rec.options.index(p):
        lines.append(f"Spot wins: {where} {_verb(risk, per)}, "
                     f"interruptions included ({ec.typical.amount / base.typical.amount - 1:+.0%}"
                     f" over uninterrupted: {_why(risk)}); {rival} costs "
                     f"{format_money(p.cost.typical)}{per}.")
        return lines
    if base.typical.amount >= p.cost.typical.amount:
        lines.append(f"On-demand wins: {rival} costs {format_money(p.cost.typical)}{per}; spot "
                     f"is not cheaper here even without interruptions: the cheapest spot "
                     f"option, {where}, costs {format_money(base.typical)}{per} uninterrupted "
                     f"({expected_phrase(risk, per)} with them).")
        return lines
    lines.append(f"On-demand wins: {rival} costs {format_money(p.cost.typical)}{per}; the "
                 f"cheapest spot option, {where}, would cost {format_money(base.typical)}{per} "
                 f"uninterrupted but {_verb(risk, per)}, because "
                 f"{_why(risk)}.")
    return lines


def _why(risk: SpotRisk) -> str:
    """What the interruptions cost this option, in words."""
    rate = risk.assumption.interruptions_per_hour.typical
    if isinstance(risk, SpotServing):
        return (f"it runs {int(risk.spares.typical)} spare replica(s) beside {risk.replicas} "
                f"to ride out {rate:g} interruptions per replica-hour and each replacement's "
                "restart")
    rate *= risk.instances
    every = format_duration(3600 / rate) if rate > 0 else "never"
    work = format_duration(risk.work_s.typical)
    n = risk.interruptions.typical
    if not risk.finishes[1]:
        return (f"at the typical rate (one interruption every {every}) a run of {work} "
                + ("without checkpoints" if risk.checkpoint_every_s is None else
                   f"checkpointed every {format_duration(risk.checkpoint_every_s)}")
                + " does not finish in practice: restarts, not work, set its length")
    if risk.kind == "items":
        return (f"an interruption (one every {every} typically, {n:.2g} expected) loses only "
                f"the items in flight plus a {format_duration(risk.restart_billed_s.typical)} "
                "restart")
    if risk.checkpoint_every_s is None:
        return (f"it runs {work} without checkpoints and an interruption (one every {every} "
                f"typically) restarts it from the beginning: {n:.2g} expected")
    if risk.checkpoint_every_s >= risk.work_s.typical:
        return (f"it runs {work}, shorter than its checkpoint interval, so an interruption "
                f"(one every {every} typically, {n:.2g} expected) restarts it from the "
                f"beginning")
    return (f"it checkpoints every {format_duration(risk.checkpoint_every_s)}: "
            f"{n:.2g} interruption(s) expected (one every {every} typically), each losing up "
            f"to that much work plus a {format_duration(risk.restart_billed_s.typical)} "
            "restart")
