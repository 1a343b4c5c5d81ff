"""Ring (and Ulysses x ring) layouts in ``recommend`` for a diffusion pipeline split over GPUs
(issue 29's build list): the recommender tries each ring degree the tokens' GPUs allow and keeps
the fastest on the card's link; a Ulysses degree that does not divide the attention heads is
never offered (DeepSpeed-Ulysses splits the heads)."""

from __future__ import annotations

import pytest

from whichgpu.advise.diffusion_ring import fastest_ring, ring_choices
from whichgpu.answers.advice import recommend
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.answers.requests import Recommend
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.diffusion_parallel import diffusion_layout
from whichgpu.estimate.speed import estimate_speed

VIDEO = {"task": "video", "engine": "sglang", "resolution": "1280x720", "frames": 129}


def _heads(w) -> int:
    d = w.diffusion_spec
    return d.component(d.denoiser).num_heads


def _seconds(w, gpu) -> float:
    est = estimate_speed(w, gpu, w.gpus, check_fit=False, saturation=False)
    return est.times["seconds_per_video"].typical


def test_every_choice_splits_the_heads_evenly_over_ulysses():
    w = build_workload("hunyuanvideo", gpus=5, **VIDEO)  # 24 heads: Ulysses 5 cannot run
    lay = diffusion_layout(w)
    assert lay.sp == 5 and _heads(w) % 5
    choices = ring_choices(w)
    assert [c.ring_degree for c in choices] == [5]  # ring attention alone
    w8 = build_workload("hunyuanvideo", gpus=8, **VIDEO)
    assert [c.ring_degree for c in ring_choices(w8)] == [1, 2, 4, 8]
    for c in ring_choices(w8):
        lay = diffusion_layout(c)
        assert _heads(c) % lay.ulysses == 0


@pytest.mark.parametrize(("gpu_id", "ring_wins"), [
    ("h100-sxm", False),  # NVLink: the all-to-alls are cheap, Ulysses alone is fastest
    ("a100-80gb-pcie", True),  # PCIe: the ring's exchanges hide behind the attention
])
def test_the_fastest_mix_on_the_card_is_kept(gpu_id, ring_wins):
    gpu = get_gpu(gpu_id)
    w = build_workload("hunyuanvideo", gpus=8, **VIDEO)
    best = fastest_ring(w, gpu)
    times = {c.ring_degree: _seconds(c, gpu) for c in ring_choices(w)}
    assert _seconds(best, gpu) == min(times.values())
    assert (best.ring_degree > 1) == ring_wins


def test_recommend_offers_ring_layouts_and_no_impossible_ulysses():
    answer = recommend(Recommend(model="hunyuanvideo", videos=1, only="h100-sxm,a100-80gb-pcie",
                                 **VIDEO)).to_json()
    layouts = {(o["gpu"], o["count"]): o["layout"] for o in answer["options"]}
    assert layouts[("h100-sxm", 8)] == "ulysses=8"
    assert "ring=2" in layouts[("a100-80gb-pcie", 2)]
    # 5 linked H100s: the shipped prices sell no 5-GPU machine, and 5 of an 8-GPU machine lose
    # to its 8, so the size is asked of an offer priced per GPU (a machine of 5 at that price)
    from whichgpu.advise.evaluate import evaluate
    from whichgpu.answers.inputs.job import build_job
    from whichgpu.catalog.offers import Offer
    from whichgpu.units import Money

    job = build_job(build_workload("hunyuanvideo", **VIDEO), videos="1")
    five = evaluate(job, get_gpu("h100-sxm"), 5,
                    [Offer(provider="p", gpu="h100-sxm", price_per_hour=Money(2.0, "USD"))],
                    "USD")
    assert five is not None and str(five.layout) == "ring=5"  # was "ulysses=5" on 24 heads


def test_ulysses_divides_each_tensor_parallel_ranks_heads():
    # FLUX.1-dev: 24 heads, tp=2 leaves 12 a rank; 8 GPUs = tp 2 x sp 4: Ulysses 4 divides 12
    w = build_workload("flux.1-dev", task="image", engine="sglang", gpus=8, tp=2)
    lay = diffusion_layout(w)
    assert (lay.tp, lay.sp) == (2, 4)
    for c in ring_choices(w):
        lay = diffusion_layout(c)
        assert (_heads(c) // lay.tp) % lay.ulysses == 0
    w12 = build_workload("flux.1-dev", task="image", engine="sglang", gpus=6, tp=6)
    assert ring_choices(w12) == [w12]  # nothing left to split the tokens over


def test_a_ring_asked_on_a_job_too_big_for_a_whole_pipeline_still_answers():
    # 67 GB a GPU with the pipeline whole: the fits tried include tensor-parallel splits, and
    # tp=8 leaves no GPU for a ring of 2; that try is left out instead of refusing the question
    from whichgpu.estimate.diffusion_parallel import tries

    w = build_workload("hunyuanvideo", gpus=8, quant="fp8", ring_degree=2, **VIDEO)
    tried = tries(w, w, get_gpu("l40s"))
    assert all(diffusion_layout(t).ring == 2 for t in tried)
    assert 8 not in [t.tp for t in tried] and 4 in [t.tp for t in tried]
    est = estimate_speed(w, get_gpu("l40s"), 8)
    assert est.times["seconds_per_video"].typical > 0
