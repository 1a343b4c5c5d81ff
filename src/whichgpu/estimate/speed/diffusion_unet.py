"""UNet FLOPs per denoiser pass, counted layer by layer from the UNet2DConditionModel config.

A UNet applies each layer at the latent positions of its own resolution level, and where the
parameters sit differs between designs: SD 1.x has a transformer at the full latent resolution,
SDXL none there (2 and 10 transformer layers at 1/2 and 1/4 of the side: Podell et al. 2023,
section 2.1). A single "parameters x positions x fraction" rule therefore over-counts SDXL
against SD 1.5 by about 1.4x. The count here follows diffusers' UNet2DConditionModel: 3x3
ResNet convolutions (and 1x1 shortcuts), down- and up-sampling convolutions, and each
transformer layer's linears (proj in/out, self- and cross-attention projections, GEGLU
feed-forward) plus its attention matmuls (QK^T and AV over the level's tokens and the text
tokens). Norms, activations and the time embedding are left out (not matmul work).

Check: SD 1.4's UNet at 512x512 counts 338.6 G multiply-accumulates without the attention
matmuls, as BK-SDM's table states (338.7 G MACs; Kim et al. 2023, arXiv 2305.15798).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.catalog.gpus import GPU


@dataclass(frozen=True)
class UNetLayout:
    """The parts of a UNet2DConditionModel config that set its FLOPs."""

    channels: tuple[int, ...]
    down_types: tuple[str, ...]
    up_types: tuple[str, ...]
    layers_per_block: tuple[int, ...]
    transformer_layers: tuple[int, ...]
    cross_dim: int
    in_channels: int = 4
    out_channels: int = 4
    mid_block: bool = True

    @classmethod
    def from_config(cls, cfg: dict) -> UNetLayout:
        chans = tuple(cfg.get("block_out_channels") or (320, 640, 1280, 1280))
        n = len(chans)

        def per(key: str, default: int) -> tuple[int, ...]:
            v = cfg.get(key, default)
            return tuple(v) if isinstance(v, list) else (int(v),) * n

        cross = cfg.get("cross_attention_dim", 1280)
        return cls(chans,
                   tuple(cfg.get("down_block_types") or
                         ["CrossAttnDownBlock2D"] * (n - 1) + ["DownBlock2D"]),
                   tuple(cfg.get("up_block_types") or
                         ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * (n - 1)),
                   per("layers_per_block", 2), per("transformer_layers_per_block", 1),
                   int(cross[0] if isinstance(cross, list) else cross),
                   int(cfg.get("in_channels", 4)), int(cfg.get("out_channels", 4)),
                   bool(cfg.get("mid_block_type", "UNetMidBlock2DCrossAttn")))


def unet_macs(u: UNetLayout, latent_h: int, latent_w: int, text_tokens: int = 77,
              ) -> tuple[float, float]:
    """(convolution + linear MACs, attention-matmul MACs) of one pass of one sample."""
    n = len(u.channels)
    hw = latent_h * latent_w
    dense = 0.0
    attn = 0.0

    def resnet(cin: int, cout: int, pos: float) -> float:
        return (9 * cin * cout + 9 * cout * cout + (cin * cout if cin != cout else 0)) * pos

    def transformer(c: int, depth: int, pos: float) -> tuple[float, float]:
        # proj_in/proj_out; per layer: self q,k,v,out + cross q,out (6 c^2), GEGLU c->8c and
        # 4c->c (12 c^2), cross k,v over the text tokens
        lin = 2 * c * c * pos + depth * (18 * c * c * pos + 2 * text_tokens * u.cross_dim * c)
        return lin, depth * (2 * pos * pos * c + 2 * pos * text_tokens * c)

    dense += 9 * u.in_channels * u.channels[0] * hw
    skips = [u.channels[0]]
    out = u.channels[0]
    for i, kind in enumerate(u.down_types):
        pos = hw / 4 ** i
        for _ in range(u.layers_per_block[i]):
            dense += resnet(out, u.channels[i], pos)
            out = u.channels[i]
            if "CrossAttn" in kind:
                lin, a = transformer(out, u.transformer_layers[i], pos)
                dense, attn = dense + lin, attn + a
            skips.append(out)
        if i != n - 1:
            dense += 9 * out * out * pos / 4
            skips.append(out)
    if u.mid_block:
        pos = hw / 4 ** (n - 1)
        dense += 2 * resnet(u.channels[-1], u.channels[-1], pos)
        lin, a = transformer(u.channels[-1], u.transformer_layers[-1], pos)
        dense, attn = dense + lin, attn + a
    rchans, rdepth, rlayers = u.channels[::-1], u.transformer_layers[::-1], \
        u.layers_per_block[::-1]
    for i, kind in enumerate(u.up_types):
        pos = hw / 4 ** (n - 1 - i)
        for _ in range(rlayers[i] + 1):
            skip = skips.pop() if skips else 0
            dense += resnet(out + skip, rchans[i], pos)
            out = rchans[i]
            if "CrossAttn" in kind:
                lin, a = transformer(out, rdepth[i], pos)
                dense, attn = dense + lin, attn + a
        if i != n - 1:
            dense += 9 * out * out * pos * 4  # nearest upsample, then a 3x3 conv
    dense += 9 * u.channels[0] * u.out_channels * hw
    return dense, attn


@lru_cache(maxsize=16)
def preset_layout(source: str) -> UNetLayout | None:
    """The UNet layout of a shipped preset (``preset:sdxl``), or None for other sources."""
    if not source.startswith("preset:"):
        return None
    path = resources.files("whichgpu.models").joinpath("presets", source.split(":", 1)[1],
                                                      "unet", "config.json")
    if not path.is_file():
        return None
    cfg = json.loads(path.read_text())
    if cfg.get("_class_name", "UNet2DConditionModel") != "UNet2DConditionModel":
        return None
    return UNetLayout.from_config(cfg)


def half_rate_relief(gpu: GPU, precision: str) -> tuple[float, str]:
    """How much more of its peak a UNet reaches on a card whose 16-bit tensor path with FP32
    accumulate runs at a cut rate (GeForce: half the FP16-accumulate rate; NVIDIA's Ada
    whitepaper: RTX 4090 165 against 330 TFLOPS dense). A UNet's convolutions and linears are
    narrow (320-1,280 channels), so their kernels spend a fixed share of each tile in loads,
    address arithmetic and epilogues besides the matrix multiply-accumulates; where the MMAs
    take twice as long per tile that share weighs half as much. The efficiency is fitted on
    full-rate cards (A100), so a cut-rate card gets (full / cut rate) ** unet_cut_rate_exponent:
    the exponent lies between 0 (MMA-bound kernels: no relief) and 1 (overhead-bound: the full
    ratio). Transformer denoisers' wide GEMMs keep their fitted efficiency on both."""
    from whichgpu.estimate.constants import speed_value

    if precision not in ("fp16", "bf16"):
        return 1.0, ""
    cut, full = gpu.tflops(precision), gpu.tflops("fp16_acc16")
    if not cut or not full or full <= cut * 1.05:
        return 1.0, ""
    beta = speed_value("unet_cut_rate_exponent")
    relief = (full / cut) ** beta
    return relief, (f"UNet on a cut-rate tensor path ({cut:g} of {full:g} TFLOPS with FP32 "
                    f"accumulate): x{relief:.2f} of the fitted efficiency, its narrow kernels' "
                    "fixed work per tile weighing less")
