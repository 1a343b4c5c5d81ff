"""How much of an architecture's "harder to keep busy" penalty a given card carries.

``compute_arch_factor`` (speed_constants.toml) says how much less of the datasheet tensor peak
eager kernels reach on Hopper, data-centre Blackwell and CDNA than on Ampere/Ada: their
tensor cores are fed by the same SMs (registers, shared memory, the softmax and elementwise
work on the FP32 units) at several times the rate. The penalty belongs to the full-rate card.
An export card that keeps the architecture's SMs and memory but cuts the tensor rate (the H20:
148 dense BF16 TFLOPS against the H100's 989, with 44 against 67 FP32 TFLOPS, epoch-h20) feeds
its tensor cores like an Ampere card, and measured runs show it: xDiT's HunyuanVideo
1280x720x129 takes 6,639 s on one H20 against 1,904 s on one H100 (3.5x) where the tensor
peaks differ 6.7x (https://github.com/xdit-project/xDiT).

The card's tensor-to-vector ratio (dense 16-bit tensor TFLOPS / FP32 vector TFLOPS, both from
the catalog and both scaling with SMs x clock) against the largest ratio among the catalog
cards of its architecture measures how cut its tensor rate is; the factor is relieved in that
proportion, never above 1. Only a cut rate counts (under CUT_RATE of the full one): the
variants of one design differ by their clocks and power limits (H100 NVL and PCIe within 6 %
of the SXM's ratio), not by how their tensor cores are fed.
"""

from __future__ import annotations

from functools import cache

from whichgpu.catalog.gpus import GPU
from whichgpu.estimate.constants import per_key
from whichgpu.estimate.speed.hardware import arch_key

CUT_RATE = 0.5  # H20: 23 % of the H100's ratio; same-design variants: within 6 %


def tensor_to_vector(gpu: GPU) -> float | None:
    """Dense 16-bit tensor TFLOPS per FP32 vector TFLOPS (None when either is unknown)."""
    tensor = gpu.tflops("bf16") or gpu.tflops("fp16")
    vector = gpu.tflops("fp32")
    if not tensor or not vector:
        return None
    return tensor / vector


@cache
def full_rate_ratio(arch: str) -> float | None:
    """The largest tensor-to-vector ratio among the shipped catalog's cards of ``arch``."""
    from whichgpu.catalog.gpus import default_catalog

    ratios = [r for g in default_catalog().gpus if arch_key(g) == arch
              for r in (tensor_to_vector(g),) if r]
    return max(ratios) if ratios else None


def card_arch_factor(gpu: GPU) -> tuple[float, str]:
    """``compute_arch_factor`` for this card: the architecture's factor on its full-rate
    cards, relieved in proportion to a cut tensor rate, and why (empty when not relieved)."""
    arch = arch_key(gpu)
    factor = per_key("compute_arch_factor", arch)
    ratio = tensor_to_vector(gpu)
    full = full_rate_ratio(arch)
    if factor >= 1.0 or not ratio or not full or ratio >= CUT_RATE * full:
        return factor, ""
    relieved = min(1.0, factor * full / ratio)
    return relieved, (f"{arch} factor {factor:g} relieved to {relieved:.2f}: this card's tensor "
                      f"rate is {ratio / full:.0%} of its architecture's full rate per SM "
                      "(tensor/FP32 TFLOPS), so its SMs keep it busy")
