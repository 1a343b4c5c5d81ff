"""Decode dispatch cost on GPUs built from several dies (Apple's Ultra chips: two Max dies
joined by UltraFusion).

A decode step is a chain of small dependent kernels, a few per layer; each waits for the
previous one to finish on every GPU core. On a two-die GPU that wait spans the die-to-die
link, so each layer's launches cost a multiple of a one-die chip's. Measured as the
pattern of llama.cpp's Metal decode on the M3 Ultra (validation/speed-notes.md, issue metal9):
the smaller the model, the further below its bandwidth share it runs (Llama 3.2 3B at about
0.5 of the 70B's share), while the one-die M4 Pro shows no such gap.
"""

from __future__ import annotations

from whichgpu.estimate.constants import per_key
from whichgpu.estimate.speed.hardware import Hardware


def dies(hw: Hardware) -> int:
    """GPU dies of the card (catalog id in ``gpu_dies``; 1 unless listed)."""
    return int(per_key("gpu_dies", hw.gpu.id))


def layer_dispatch_factor(engine_factor: float, hw: Hardware) -> float:
    """How many times a one-die chip's per-layer launch cost a layer costs on this card:
    1 + (dies - 1) x the engine's ``decode_die_sync_factor``."""
    return 1.0 + (dies(hw) - 1) * engine_factor
