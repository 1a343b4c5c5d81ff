"""Serving a request rate, options of equal cost are ordered by the latency users get (TPOT,
then TTFT), not by the catalog's order: every option serves the same demand, so the served
rate the ranking once broke ties on was the same for all, and an RTX 4090 slower on both
TPOT and TTFT ranked above an RTX 5090, the 300 W RTX PRO 6000 Max-Q could rank above the
600 W card of the same memory, whichever came first in the catalog."""

from __future__ import annotations

from whichgpu.advise.job import Job
from whichgpu.advise.recommend import recommend_for_rate
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.units import Money

GPUS = ("rtx-4090", "rtx-5090", "rtx-pro-6000-ws", "rtx-pro-6000-maxq")


def _rec(order: tuple[str, ...]):
    w = build_workload("qwen3-8b", engine="vllm", prompt_tokens=512, output_tokens=256)
    offers = [Offer(provider="p", gpu=g, price_per_hour=Money(1.0, "USD")) for g in GPUS]
    return recommend_for_rate(Job(w, requests_per_s=2.0), offers,
                              gpus=[get_gpu(g) for g in order])


def _latency(o) -> tuple[float, float]:
    return o.serving["tpot_s"]["typical"], o.serving["ttft_s"]["typical"]


def test_equal_cost_options_rank_by_latency_whatever_the_catalog_order():
    ranked = [o for o in _rec(GPUS).options if o.replicas == 1]
    assert len({o.price_per_hour.amount for o in ranked}) == 1 and len(ranked) == len(GPUS)
    assert [_latency(o) for o in ranked] == sorted(_latency(o) for o in ranked)
    # the premise: the cards differ (the 4090's TPOT, the Max-Q's lower clocks on TTFT)
    by_gpu = {o.gpu.id: _latency(o) for o in ranked}
    assert by_gpu["rtx-4090"][0] > by_gpu["rtx-5090"][0]
    assert by_gpu["rtx-pro-6000-maxq"][1] > by_gpu["rtx-pro-6000-ws"][1]
    backwards = [o.gpu.id for o in _rec(GPUS[::-1]).options if o.replicas == 1]
    assert backwards == [o.gpu.id for o in ranked]
    assert backwards.index("rtx-pro-6000-ws") < backwards.index("rtx-pro-6000-maxq")
    assert backwards.index("rtx-5090") < backwards.index("rtx-4090")


def test_costs_equal_as_shown_rank_the_faster_first():
    """Independent image pipelines on 1..8 separate machines of one card cost the same
    GPU-hours, a fraction of a cent apart after per-second billing of each machine: the reader
    sees one cost, so the faster option ranks first (it was 6 machines, then 4, 3, 2, 1, 5, 7
    by those fractions of a cent)."""
    from whichgpu.advise.recommend import recommend

    w = build_workload("flux.1-dev", task="image")
    offer = Offer(provider="p", gpu="rtx-6000-ada", price_per_hour=Money(0.37, "USD"))
    rec = recommend(Job(w, images=10_000), [offer], gpus=[get_gpu("rtx-6000-ada")])
    same = [o for o in rec.options if f"{o.cost.typical.amount:.4g}"
            == f"{rec.options[0].cost.typical.amount:.4g}"]
    assert len(same) >= 3  # the premise: several options show the same cost
    assert len({round(o.cost.typical.amount, 6) for o in same}) > 1  # not exactly equal
    times = [o.time_s.typical for o in same]
    assert times == sorted(times)
