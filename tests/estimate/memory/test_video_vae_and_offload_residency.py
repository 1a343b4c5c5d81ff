"""Video memory as diffusers runs HunyuanVideo: its VAE decodes 17 frames per pass, and an
8-bit bitsandbytes transformer never leaves the GPU under model offload.

The HF post 'State of open video generation models in Diffusers' (validation/incoming/memory-
2026.csv, in-mem-hfvideo-*) measured HunyuanVideo at 768x512, 121 frames on an A100 80GB. With
one latent frame (4 frames) per VAE pass, as Wan's VAE decodes, the untiled rows came out
15-17 GiB low (base 45.1 against 60.1 GiB); with 8-bit weights, model offload and VAE tiling,
the text-encoding stage holds the 12 GiB 8-bit transformer beside the 14 GiB text encoder (26.2
GiB measured, 17.2 estimated without it).
"""

from __future__ import annotations

from paths import ROOT
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.validation import read_rows
from whichgpu.estimate.validation.memory import predict
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model
from whichgpu.models.diffusion.vaes import video_vae_decoding
from whichgpu.units import GiB

INCOMING = ROOT / "validation/incoming/memory-2026.csv"


def _rows() -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in read_rows(INCOMING) if r["id"].startswith("in-mem-hfvideo-")}


def _error(row: dict[str, str]) -> float:
    est, _ = predict(row)
    assert est
    from whichgpu.estimate.validation.rows import measured_bytes

    return est / measured_bytes(row)[0] - 1


def hunyuan(**kw) -> Workload:
    return Workload(model=resolve_model("tencent/HunyuanVideo"), task="video",
                    engine="diffusers", resolution=(768, 512), frames=121, **kw)


def test_hunyuanvideo_vae_decodes_seventeen_frames_per_pass() -> None:
    assert video_vae_decoding("AutoencoderKLHunyuanVideo") == (17, 256)
    assert video_vae_decoding("AutoencoderKLWan") == (None, None)  # one latent frame a pass
    assert hunyuan().diffusion_spec.vae_decode_frames == 17
    untiled = estimate_memory(hunyuan()).details["vae_decode_bytes"]
    tiled = estimate_memory(hunyuan(vae_tiling=True)).details["vae_decode_bytes"]
    out = 768 * 512 * 121 * 3 * 4  # the decoded video in fp32, either way
    # untiled: 768 x 512 pixels x 17 frames; tiled: one 256 x 256 tile x 17 frames
    assert (untiled - out) / (tiled - out) == 768 * 512 / (256 * 256)


def test_untiled_and_tiled_rows_within_a_sixth() -> None:
    rows = _rows()
    for rid in ("in-mem-hfvideo-hyv-base", "in-mem-hfvideo-hyv-tiling",
                "in-mem-hfvideo-hyv-4bit", "in-mem-hfvideo-hyv-4bit-tiling",
                "in-mem-hfvideo-hyv-8bit", "in-mem-hfvideo-hyv-8bit-tiling"):
        assert abs(_error(rows[rid])) < 1 / 6, rid


def test_eight_bit_transformer_stays_through_text_encoding() -> None:
    rows = _rows()
    assert abs(_error(rows["in-mem-hfvideo-hyv-8bit-offload-tiling"])) < 0.1
    eight = estimate_memory(hunyuan(quant="bnb-int8", offload="model", vae_tiling=True))
    four = estimate_memory(hunyuan(quant="nf4", offload="model", vae_tiling=True))
    # the 8-bit transformer (about 12 GiB) on top of the text encoder; 4-bit leaves the GPU
    assert eight.term("weights") - four.term("weights") > 10 * GiB


def test_wan_vae_keeps_two_frames_of_every_causal_convolution() -> None:
    """Wan 2.1's decoder (base_dim 96, dim_mult 1,2,4,4, 2 residual blocks): per output pixel
    672 cached channels at full resolution (six 96-channel convolutions and conv_out), 1,152 at
    1/4 of the pixels, 2,496 at 1/16 and 4,240 at 1/64: 1,182.25. The diffusers example that
    group-offloads Wan 2.1 14B (about 13 GB, validation/memory.csv) came out 40 % low without
    this cache (3.8 GB in fp32 at 832x480)."""
    spec = resolve_model("wan-2.1-14b").diffusion
    assert spec.vae_cache_channels == 672 + 1152 / 4 + 2496 / 16 + 4240 / 64
    assert resolve_model("wan-2.2-5b").diffusion.vae_cache_channels == 0  # residual: not modelled
    row = next(r for r in read_rows(ROOT / "validation/memory.csv")
               if r["id"] == "mem-wan21-t2v14b-group-offload")
    assert abs(_error(row)) < 0.15


def test_eight_bit_denoiser_crosses_no_pcie_under_model_offload() -> None:
    """The speed model's offload traffic agrees with the memory model: the text encoders
    cross the host link once per video, the 8-bit transformer never."""
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.estimate.speed.diffusion import _offload_seconds
    from whichgpu.estimate.speed.hardware import hardware

    hw = hardware(default_catalog().get("a100-80gb-sxm"))
    eight, _ = _offload_seconds(hunyuan(quant="bnb-int8", offload="model"), hw, 50)
    four, _ = _offload_seconds(hunyuan(quant="nf4", offload="model"), hw, 50)
    assert 0 < eight < four  # four also moves its 4-bit transformer
