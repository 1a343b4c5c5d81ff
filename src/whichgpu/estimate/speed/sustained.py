"""What a card's matmuls sustain in practice, relative to its datasheet peak.

Datasheets give the tensor peak at the rated boost clock. Measured large matmuls in PyTorch
(cuBLAS, 16-bit inputs, FP32 accumulate: what diffusers, ComfyUI and training loops run) reach
about 80 % of it on full-rate data-centre cards, at least 100 % of the half FP32-accumulate
rate on GeForce cards (their clocks boost past the rated one and the half rate never reaches
the power limit), and much less on power-limited cards (a 70 W T4 65 %, a 72 W L4 under 50 %).
The constant ``sustained_matmul_fraction`` holds those measurements per GPU, with class
defaults for cards nobody has measured, lowered to what the board's power limit can feed where
the architecture's power-limited cards say how many watts a sustained TFLOP draws
(``power_limited_watts_per_tflop``: an RTX 6000 Ada at 300 W, an L40 at 300 W); the speed
model's efficiencies are fitted against the reference 80 % (``REFERENCE_MATMUL_FRACTION``, the
fraction a calibration profile is compared with too), so the scale is ``fraction / 0.80``.
"""

from __future__ import annotations

from whichgpu.catalog.gpus import GPU
from whichgpu.estimate.constants import speed_value
from whichgpu.estimate.speed.hardware import REFERENCE_MATMUL_FRACTION


def sustained_fraction(gpu: GPU) -> tuple[float, str]:
    """(measured large-matmul throughput / datasheet dense peak, where the figure comes from)."""
    table = speed_value("sustained_matmul_fraction")
    if gpu.id in table:
        return float(table[gpu.id]), f"{gpu.id} measured"
    key = "consumer" if gpu.form_factor == "consumer" else "default"
    fraction, where = float(table[key]), f"{key} cards (no measurement of {gpu.id})"
    power = power_limited_fraction(gpu)
    if power is not None and power < fraction:
        return power, (f"{gpu.id}'s {gpu.tdp_watts:.0f} W limit at the watts per TFLOP its "
                       "architecture's power-limited cards draw")
    return fraction, where


def power_limited_fraction(gpu: GPU) -> float | None:
    """The fraction of its dense 16-bit peak a card can power at its board limit, from the
    watts per sustained TFLOP its architecture's power-limited cards were measured to draw
    (None where no card of the architecture has been measured at its limit)."""
    per_tflop = speed_value("power_limited_watts_per_tflop")
    arch = str(gpu.architecture.value)
    peak = gpu.tflops("bf16") or gpu.tflops("fp16")
    if arch not in per_tflop or not peak or not gpu.tdp_watts:
        return None
    return gpu.tdp_watts / (float(per_tflop[arch]) * peak)


def sustained_scale(gpu: GPU) -> tuple[float, str]:
    """The factor on the datasheet peak relative to the reference the efficiencies assume, and
    why (1.0 for a card that sustains the reference 80 %)."""
    fraction, where = sustained_fraction(gpu)
    scale = fraction / REFERENCE_MATMUL_FRACTION
    return scale, (f"matmuls sustain {fraction:.0%} of the datasheet peak ({where}; "
                   f"x{scale:.2f} against the {REFERENCE_MATMUL_FRACTION:.0%} reference)")
