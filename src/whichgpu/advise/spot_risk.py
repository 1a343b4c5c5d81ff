"""Spot options in the recommender: the expected cost a spot offer is ranked by, and why.

``cost/spot.py`` models interruptions; this module feeds it what the recommender knows about
one option (the job's kind, its uninterrupted time, the bytes a checkpoint and a restart move)
and words the comparison with on-demand for the explanation.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from whichgpu.cost.spot import SpotEstimate, SpotServing, expected_run, serving_on_spot
from whichgpu.messages import Message, msg
from whichgpu.units import Duration, Money, Range

if TYPE_CHECKING:
    from whichgpu.advise.job import Job
    from whichgpu.advise.recommend import Recommendation
    from whichgpu.catalog.offers import Offer
    from whichgpu.estimate.speed import SpeedEstimate
    from whichgpu.estimate.workload import Workload

SpotRisk = SpotEstimate | SpotServing
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
        return expected_run(offer, seconds, gpus=count,
                            checkpoint_every_s=job.checkpoint_every_s,
                            checkpoint_bytes=ckpt, load_bytes=load)
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


def explain_spot(rec: Recommendation) -> list[Message]:
    """What spot changed: the best spot option against the best on-demand one."""
    spot = [o for o in rec.options if o.offer.spot]
    plain = [o for o in rec.options if not o.offer.spot]
    if not rec.job.spot:
        return []
    if not spot:
        return [msg("spot.none", "No spot offer in this price list can run the job; the "
                    "options are on-demand.")]
    s = spot[0]
    lines: list[Message] = []
    risk = s.spot_risk
    if isinstance(risk, SpotServing):
        lines.append(msg("spot.spares", "Spot replicas need spare capacity: {name} on spot runs "
                         "{spares} spare replica(s) ({low}-{high}) to stay up {target:.0%} of "
                         "the time, about {cost}/h in all.", name=s.label,
                         spares=int(risk.spares.typical), low=int(risk.spares.low),
                         high=int(risk.spares.high), target=risk.target,
                         cost=risk.cost_per_hour.typical))
    if not plain:
        return lines
    p = plain[0]
    ec = expected_cost(risk) or s.cost
    if isinstance(risk, SpotEstimate):
        why = _why(risk)
        if rec.options[0] is p:
            lines.append(msg(
                "spot.on_demand_wins", "On-demand wins: {plain} on-demand costs {plain_cost}; "
                "the cheapest spot option, {spot} on {provider}, is expected to cost {cost} "
                "({low}-{high}) against {uninterrupted} uninterrupted, because {why}.",
                plain=p.label, plain_cost=p.cost.typical, spot=s.label,
                provider=s.offer.provider, cost=ec.typical, low=ec.low, high=_high(risk),
                uninterrupted=risk.uninterrupted_cost.typical, why=why))
        else:
            lines.append(msg(
                "spot.wins", "Spot wins: {spot} on {provider} spot is expected to cost {cost} "
                "({low}-{high}), interruptions included ({overhead:+.0%} over uninterrupted: "
                "{why}); on-demand, {plain} costs {plain_cost}.", spot=s.label,
                provider=s.offer.provider, cost=ec.typical, low=ec.low, high=_high(risk),
                overhead=risk.overhead, why=why, plain=p.label, plain_cost=p.cost.typical))
    return lines


def _high(risk: SpotEstimate) -> Money | Message:
    return (msg("spot.never_finishing", "never finishing") if risk.never_finishes
            else risk.cost.high)


def _why(risk: SpotEstimate) -> Message:
    rate = risk.assumption.interruptions_per_hour.typical * risk.instances
    every = Duration(3600 / rate) if rate > 0 else msg("spot.never", "never")
    work = Duration(risk.work_s.typical)
    n = risk.interruptions.typical
    restart = Duration(risk.restart_billed_s.typical)
    if risk.kind == "training" and risk.checkpoint_every_s is None:
        return msg("spot.why.restart", "it runs {work} without checkpoints and an interruption "
                   "(one every {every} typically) restarts it from the beginning: {n:.2g} "
                   "expected", work=work, every=every, n=n)
    if risk.kind == "items":
        return msg("spot.why.items", "an interruption (one every {every} typically, {n:.2g} "
                   "expected) loses only the items in flight plus a {restart} restart",
                   every=every, n=n, restart=restart)
    if risk.checkpoint_every_s is None or risk.checkpoint_every_s >= risk.work_s.typical:
        return msg("spot.why.short", "it runs {work}, less than a checkpoint interval: {n:.2g} "
                   "interruption(s) expected (one every {every} typically)", work=work, n=n,
                   every=every)
    return msg("spot.why.checkpoints", "it checkpoints every {interval}: {n:.2g} "
               "interruption(s) expected, each losing up to that much work plus a {restart} "
               "restart", interval=Duration(risk.checkpoint_every_s or 0), n=n,
               restart=restart)
