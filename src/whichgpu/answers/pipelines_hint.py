"""One video per GPU beside a video split over several GPUs (brief flaws10, item 8).

A multi-GPU video answer runs each video split over the GPUs (diffusers' context parallelism,
xDiT's Ulysses and ring), which does not scale linearly. When the card holds the whole pipeline
alone (the same recommendation ranks it on one GPU), the same GPUs can instead each generate
their own videos, at one GPU's speed each, in rounds of as many videos as GPUs. The ranking
does not try that layout yet; the answer says what it would take, from its own one-GPU
option of the card, where it is faster than the split.
"""

from __future__ import annotations

import math
from typing import Any

from whichgpu.messages import Message, msg
from whichgpu.units import Duration, Money
from whichgpu.vocabulary import WorkKind


def independent_pipelines(rec: Any) -> Message | None:
    """The best option's GPUs each running whole videos, where that beats splitting each
    video over them (None when the best option is one GPU, is not a split video, or the card
    has no one-GPU option to time a whole video by)."""
    from whichgpu.advise.machines import linked_gpus

    best = rec.best
    videos = rec.job.videos
    if (best is None or rec.job.kind != WorkKind.VIDEOS or not videos or best.gpus < 2
            or best.time_s is None or best.workload is None
            or linked_gpus(best.workload, best.count) < 2):
        return None
    alone = [o for o in rec.options if o.gpu.id == best.gpu.id and o.gpus == 1
             and o.time_s is not None and o.offer.spot == best.offer.spot]
    if not alone:
        return None
    one = alone[0].time_s  # every video on one GPU, one after the other
    n = best.gpus
    rounds = math.ceil(videos / n)
    share = rounds / videos  # of the one-GPU time: each GPU runs ``rounds`` whole videos
    if one.typical * share >= best.time_s.typical:
        return None
    scale = one.typical * share / best.time_s.typical
    cost = best.cost.typical
    speedup = one.typical / best.time_s.typical  # what the split makes of n GPUs
    return msg("change.independent_pipelines", "One video per GPU instead: the {n} x {gpu} "
               "each generating whole videos ({rounds} round(s) of up to {n}) would take about "
               "{time} ({low}-{high}) for about {cost}, against {now} with each video split "
               "over the {n} GPUs ({speedup:.1f}x one GPU's speed); whichgpu does not rank "
               "this layout yet, so start one pipeline per GPU yourself", n=n, gpu=best.gpu.id,
               rounds=rounds, time=Duration(one.typical * share),
               low=Duration(one.low * share), high=Duration(one.high * share),
               cost=Money(cost.amount * scale, cost.currency),
               now=Duration(best.time_s.typical), speedup=speedup)
