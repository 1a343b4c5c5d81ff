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
from whichgpu.messages import Message, msg
from whichgpu.units import Duration, Money, Range, format_money
from whichgpu.vocabulary import Task

if TYPE_CHECKING:
    from whichgpu.advise.job import Job
    from whichgpu.advise.machines import Machines
    from whichgpu.advise.options import Recommendation
    from whichgpu.catalog.offers import Offer
    from whichgpu.estimate.speed import SpeedEstimate
    from whichgpu.estimate.workload import Workload

SpotRisk = SpotEstimate | SpotServing
#: Trainers that save resumable checkpoints only at the end of an epoch. torchtune 0.6.1 (its
#: latest release, April 2025): "Optimizer State and recipe state ... are only saved at the
#: end of a given epoch ... Mid-epoch checkpointing is currently not supported" (docstring of
#: recipes/lora_finetune_single_device.py and the other fine-tuning recipes, pytorch/torchtune
#: tag v0.6.1). Its main branch added save_every_n_steps after that release (commit e43b6e6,
#: July 2025), unreleased, and the LoRA recipes skip it in the last epoch. A one-epoch run (the
#: export's) therefore restarts from the beginning after an interruption.
EPOCH_END_SAVERS = {"torchtune": msg("spot.epoch_end.torchtune", "torchtune 0.6.1 saves "
                                     "resumable checkpoints only at the end of each epoch "
                                     "(pytorch/torchtune v0.6.1, the fine-tuning recipes' "
                                     "docstrings)")}
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
        names = _CHECKPOINTED + (("weights",) if wl.task in (Task.FULL_FT, Task.PRETRAIN) else ())
        ckpt = sum(est.term(n) for n in names) * sharded
    weights = est.term("weights") * (wl.tp_degree * wl.pp_degree)
    return ckpt, weights + ckpt


def checkpoint_interval(job: Job, wl: Workload) -> tuple[float | None, Message | None]:
    """The checkpoint interval the spot estimate can count on, and why it differs from the
    job's (a trainer that saves only at epoch ends runs this job as one epoch)."""
    every = job.checkpoint_every_s
    if every is None or not wl.framework:
        return every, None
    from whichgpu.estimate.frameworks import framework_id

    why = EPOCH_END_SAVERS.get(framework_id(wl.framework))
    if why is None:
        return every, None
    return None, msg("spot.epoch_end", "{why}: this run is one epoch, so an interruption "
                     "restarts it from the beginning; the spot estimate counts no checkpoints "
                     "(not one every {every})", why=why, every=Duration(every))


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
              rates=None, machines: Machines | None = None) -> SpotRisk | None:
    """The spot risk of one option (None for an on-demand offer, or a job with no amount),
    in the currency of ``price_per_hour``. ``seconds`` is the wall time of each machine;
    ``machines`` how the option's GPUs sit in machines (separate machines of independent
    work are interrupted one at a time)."""
    risk = _risk(job, wl, offer, count, replicas, seconds, speed, price_per_hour, machines)
    if isinstance(risk, SpotEstimate):
        return risk.converted(price_per_hour.currency, rates)
    return risk


def _risk(job, wl, offer, count, replicas, seconds, speed, price_per_hour, machines=None):
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
    from dataclasses import replace

    from whichgpu.cost.capacity import Spread

    item = _item_s(job, wl, speed)
    if machines is not None and machines.spread is Spread.SEPARATE and machines.machines > 1:
        # independent shares on separate machines: an interruption stops only the machine it
        # hits (the others go on), so each machine is one instance on its own for its share
        n = machines.machines
        one = expected_run(offer, seconds, gpus=offer.gpu_count, load_bytes=load,
                           kind="items", item_s=item)
        said = msg("spot.separate", "{n} separate machines run independent shares: an "
                   "interruption stops only the machine it hits and its share, the others go "
                   "on ({n} x one machine's expected cost; the whole job ends with its "
                   "slowest machine, a little later than one machine's expected time)", n=n)
        return replace(one, cost=one.cost.scale(n),
                       uninterrupted_cost=one.uninterrupted_cost.scale(n),
                       assumptions=(*one.assumptions, said))
    # replicas without their machines said (older callers): each loses only its items
    work = seconds.scale(1 / replicas) if replicas > 1 and machines is None else seconds
    estimate = expected_run(offer, work, gpus=count, load_bytes=load, kind="items",
                            item_s=item)
    if replicas > 1:
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


def cost_text(risk: SpotRisk, which: str = "typical") -> Message | str:
    """One end of the expected cost for a table cell: '$12.81', or 'never ends' for a case
    that does not finish in practice (cost/spot.py NOT_IN_PRACTICE)."""
    i = ("low", "typical", "high").index(which)
    if isinstance(risk, SpotEstimate) and not risk.finishes[i]:
        return msg("spot.never_ends", "never ends")
    cost = risk.cost if isinstance(risk, SpotEstimate) else risk.cost_per_hour
    return format_money(getattr(cost, which))


def _finishing(risk: SpotRisk) -> int:
    """0: every case finishes in practice; 1: all but the busy end; 2: only the calm end;
    3: none (serving is open-ended: 0)."""
    done = risk.finishes if isinstance(risk, SpotEstimate) else (True, True, True)
    return 0 if all(done) else 1 if done[1] else 2 if done[0] else 3


def _spot_cost(risk: SpotRisk):
    return risk.cost if isinstance(risk, SpotEstimate) else risk.cost_per_hour


def expected_phrase(risk: SpotRisk, per: str = "") -> Message:
    """'expected $0.11 ($0.06-$0.23)' or 'not finishing in practice (...)'; ``per`` ('/h')
    follows the typical figure."""
    cost, case = _spot_cost(risk), _finishing(risk)
    if case == 0:
        return msg("spot.phrase.expected", "expected {typical}{per} ({low}-{high})",
                   typical=cost.typical, per=per, low=cost.low, high=cost.high)
    if case == 1:
        return msg("spot.phrase.expected_busy", "expected {typical}{per} ({low} to never "
                   "finishing at the busy end of the interruption prior)", typical=cost.typical,
                   per=per, low=cost.low)
    if case == 2:
        return msg("spot.phrase.not_finishing_calm", "not finishing in practice ({low} at the "
                   "calm end of the interruption prior)", low=cost.low)
    return msg("spot.phrase.not_finishing", "not finishing in practice, even at the calm end "
               "of the interruption prior")


def _verb(risk: SpotRisk, per: str) -> Message:
    """'is expected to cost $0.11 (...)' or 'does not finish in practice (...)'."""
    cost, case = _spot_cost(risk), _finishing(risk)
    if case == 0:
        return msg("spot.verb.expected", "is expected to cost {typical}{per} ({low}-{high})",
                   typical=cost.typical, per=per, low=cost.low, high=cost.high)
    if case == 1:
        return msg("spot.verb.expected_busy", "is expected to cost {typical}{per} ({low} to "
                   "never finishing at the busy end of the interruption prior)",
                   typical=cost.typical, per=per, low=cost.low)
    if case == 2:
        return msg("spot.verb.not_finishing_calm", "does not finish in practice ({low} at the "
                   "calm end of the interruption prior)", low=cost.low)
    return msg("spot.verb.not_finishing", "does not finish in practice, even at the calm end "
               "of the interruption prior")


def expected_seconds(risk: SpotRisk) -> float | None:
    """The expected wall time (typical): infinite when it does not finish in practice, None
    for serving (open-ended)."""
    if not isinstance(risk, SpotEstimate):
        return None
    return risk.expected_time_s.typical if risk.finishes[1] else math.inf


def explain_spot(rec: Recommendation) -> list[Message]:
    """What spot changed: the best spot option against the best on-demand one, and why the
    winner wins (a spot price above on-demand, or the interruptions)."""
    if not rec.job.spot:
        return []
    spot = [o for o in rec.options if o.offer.spot]
    plain = [o for o in rec.options if not o.offer.spot]
    if not spot:
        return [msg("spot.none", "No spot offer in this price list can run the job; the "
                    "options are on-demand.")]
    s = spot[0]
    lines: list[Message] = []
    risk = s.spot_risk
    per = "/h" if rec.job.per_hour else ""
    if isinstance(risk, SpotServing):
        lines.append(msg("spot.spares", "Spot replicas need spare capacity: {name} on spot runs "
                         "{spares} spare replica(s) ({low}-{high}) to stay up {target:.0%} of "
                         "the time, about {cost}/h in all.", name=s.label,
                         spares=int(risk.spares.typical), low=int(risk.spares.low),
                         high=int(risk.spares.high), target=risk.target,
                         cost=risk.cost_per_hour.typical))
    if not plain or risk is None:
        return lines
    p = plain[0]
    ec = expected_cost(risk)
    base = uninterrupted_cost(risk) or s.cost
    where = msg("spot.where", "{name} on {provider} spot at {price}/h", name=s.label,
                provider=s.offer.provider, price=s.price_per_hour)
    rival = msg("spot.rival", "{name} on {provider} on-demand at {price}/h", name=p.label,
                provider=p.offer.provider, price=p.price_per_hour)
    if rec.options.index(s) < rec.options.index(p):
        lines.append(msg("spot.wins", "Spot wins: {where} {verb}, interruptions included "
                         "({overhead:+.0%} over uninterrupted: {why}); {rival} costs "
                         "{plain_cost}{per}.", where=where, verb=_verb(risk, per),
                         overhead=ec.typical.amount / base.typical.amount - 1, why=_why(risk),
                         rival=rival, plain_cost=p.cost.typical, per=per))
        return lines
    if base.typical.amount >= p.cost.typical.amount:
        lines.append(msg("spot.on_demand_wins.price", "On-demand wins: {rival} costs "
                         "{plain_cost}{per}; spot is not cheaper here even without "
                         "interruptions: the cheapest spot option, {where}, costs "
                         "{uninterrupted}{per} uninterrupted ({expected} with them).",
                         rival=rival, plain_cost=p.cost.typical, per=per, where=where,
                         uninterrupted=base.typical, expected=expected_phrase(risk, per)))
        return lines
    lines.append(msg("spot.on_demand_wins", "On-demand wins: {rival} costs {plain_cost}{per}; "
                     "the cheapest spot option, {where}, would cost {uninterrupted}{per} "
                     "uninterrupted but {verb}, because {why}.", rival=rival,
                     plain_cost=p.cost.typical, per=per, where=where,
                     uninterrupted=base.typical, verb=_verb(risk, per), why=_why(risk)))
    return lines


def _why(risk: SpotRisk) -> Message:
    """What the interruptions cost this option, in words."""
    rate = risk.assumption.interruptions_per_hour.typical
    if isinstance(risk, SpotServing):
        return msg("spot.why.serving", "it runs {spares} spare replica(s) beside {replicas} to "
                   "ride out {rate:g} interruptions per replica-hour and each replacement's "
                   "restart", spares=int(risk.spares.typical), replicas=risk.replicas,
                   rate=rate)
    rate *= risk.instances
    every = Duration(3600 / rate) if rate > 0 else msg("spot.never", "never")
    work = Duration(risk.work_s.typical)
    n = risk.interruptions.typical
    restart = Duration(risk.restart_billed_s.typical)
    if not risk.finishes[1]:
        if risk.checkpoint_every_s is None:
            return msg("spot.why.unfinished", "at the typical rate (one interruption every "
                       "{every}) a run of {work} without checkpoints does not finish in "
                       "practice: restarts, not work, set its length", every=every, work=work)
        return msg("spot.why.unfinished_checkpointed", "at the typical rate (one interruption "
                   "every {every}) a run of {work} checkpointed every {interval} does not "
                   "finish in practice: restarts, not work, set its length", every=every,
                   work=work, interval=Duration(risk.checkpoint_every_s))
    if risk.kind == "items":
        return msg("spot.why.items", "an interruption (one every {every} typically, {n:.2g} "
                   "expected) loses only the items in flight plus a {restart} restart",
                   every=every, n=n, restart=restart)
    if risk.checkpoint_every_s is None:
        return msg("spot.why.restart", "it runs {work} without checkpoints and an interruption "
                   "(one every {every} typically) restarts it from the beginning: {n:.2g} "
                   "expected", work=work, every=every, n=n)
    if risk.checkpoint_every_s >= risk.work_s.typical:
        return msg("spot.why.short", "it runs {work}, shorter than its checkpoint interval, so "
                   "an interruption (one every {every} typically, {n:.2g} expected) restarts "
                   "it from the beginning", work=work, every=every, n=n)
    return msg("spot.why.checkpoints", "it checkpoints every {interval}: {n:.2g} "
               "interruption(s) expected (one every {every} typically), each losing up to that "
               "much work plus a {restart} restart", interval=Duration(risk.checkpoint_every_s),
               n=n, every=every, restart=restart)
