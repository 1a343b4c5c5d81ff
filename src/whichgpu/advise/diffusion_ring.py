"""Ring attention in a recommended multi-GPU diffusion split (issue 29).

When an engine splits one pipeline's tokens over several GPUs (sequence parallelism: SGLang
diffusion, xDiT), the split may be Ulysses (all-to-alls of Q, K, V and the output), ring
attention (each GPU passes its K/V block round a ring, the exchange overlapped with the
attention of the block in hand) or both (``sp = ulysses x ring``, xDiT's USP). The recommender
asked nothing about it tries each ring degree that the tokens' GPUs allow and keeps the one the
speed model finds fastest on this card and link: over NVLink the all-to-alls are cheap and
Ulysses alone wins; over PCIe the ring's exchanges hide behind the attention.

Ulysses splits the attention heads over its GPUs, so its degree must divide the head count
(each tensor-parallel rank's share of them)
(DeepSpeed-Ulysses, https://arxiv.org/abs/2309.14509; xDiT's USP, https://arxiv.org/abs/2405.07719:
"the Ulysses degree must be a divisor of the number of heads"); ring attention has no such
limit, so a split whose Ulysses degree does not divide the heads is run with a ring.
Memory per GPU is the same for every mix: both divide one block's activations by ``sp``.
"""

from __future__ import annotations

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.diffusion_parallel import diffusion_layout, splits_dit
from whichgpu.estimate.workload import Workload
from whichgpu.vocabulary import Task


def ring_choices(wl: Workload) -> list[Workload]:
    """The ring-attention mixes of ``wl``'s sequence-parallel split that can run, Ulysses
    alone (``ring_degree`` 1) first where its degree divides the heads; ``[wl]`` when the
    job is not a split the ring applies to, or the ring degree was chosen."""
    if (wl.task not in (Task.IMAGE, Task.VIDEO) or wl.gpus < 2 or wl.ring_degree > 1
            or not splits_dit(wl.engine_name)):
        return [wl]
    try:
        lay = diffusion_layout(wl)
    except InputError:
        return [wl]
    if lay.sp < 2 or lay.measured_context_parallel:
        return [wl]
    d = wl.diffusion_spec
    heads = (d.component(d.denoiser).num_heads or 0) // lay.tp  # each TP rank's heads
    return [wl if r == 1 else wl.with_(ring_degree=r) for r in range(1, lay.sp + 1)
            if lay.sp % r == 0 and (not heads or heads % (lay.sp // r) == 0)] or [wl]


def fastest_ring(wl: Workload, gpu: GPU) -> Workload:
    """``wl`` with the ring degree that gives the shortest time per image or video on
    ``gpu`` (the speed model's typical figure, its link between the GPUs included)."""
    choices = ring_choices(wl)
    if len(choices) == 1:
        return choices[0]
    from whichgpu.estimate.speed import estimate_speed

    def seconds(w: Workload) -> float:
        est = estimate_speed(w, gpu, w.gpus, check_fit=False, saturation=False)
        key = "seconds_per_video" if w.task == Task.VIDEO else "seconds_per_image"
        return est.times[key].typical

    return min(choices, key=seconds)
