"""What a card's matmuls sustain in practice, relative to its datasheet peak.

Datasheets give the tensor peak at the rated boost clock. Measured large matmuls in PyTorch
(cuBLAS, 16-bit inputs, FP32 accumulate: what diffusers, ComfyUI and training loops run) reach
about 80 % of it on full-rate data-centre cards, at least 100 % of the half FP32-accumulate
rate on GeForce cards (their clocks boost past the rated one and the half rate never reaches
the power limit), and much less on power-limited cards (a 70 W T4 65 %, a 72 W L4 under 50 %).
The constant ``sustained_matmul_fraction`` holds those measurements per GPU, with class
defaults for cards nobody has measured; the speed model's efficiencies are fitted against the
reference 80 % (``REFERENCE_MATMUL_FRACTION``, the fraction a calibration profile is compared
with too), so the scale is ``fraction / 0.80``.
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
    return float(table[key]), f"{key} cards (no measurement of {gpu.id})"


def sustained_scale(gpu: GPU) -> tuple[float, str]:
    """The factor on the datasheet peak relative to the reference the efficiencies assume, and
    why (1.0 for a card that sustains the reference 80 %)."""
    fraction, where = sustained_fraction(gpu)
    scale = fraction / REFERENCE_MATMUL_FRACTION
    return scale, (f"matmuls sustain {fraction:.0%} of the datasheet peak ({where}; "
                   f"x{scale:.2f} against the {REFERENCE_MATMUL_FRACTION:.0%} reference)")
