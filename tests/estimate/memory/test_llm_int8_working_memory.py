"""bitsandbytes' LLM.int8 linear keeps an int32 product and a float16 result beside the
activations' own output (autograd/_functions.py MatMul8bitLt.forward: out32, int8_mm_dequant):
6 bytes per token per output of its widest linear. HunyuanVideo with an 8-bit transformer and
VAE tiling, all on the GPU (HF video post, 36.92 GiB reserved), peaks while it denoises 47,616
tokens through 12,288-wide linears: 15 % low without them."""

from __future__ import annotations

from paths import ROOT
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.validation import read_rows
from whichgpu.estimate.validation.memory import predict
from whichgpu.estimate.validation.rows import measured_bytes
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def hunyuan(**kw) -> Workload:
    return Workload(model=resolve_model("tencent/HunyuanVideo"), task="video",
                    engine="diffusers", resolution=(768, 512), frames=121, vae_tiling=True, **kw)


def test_the_int8_product_and_its_float16_result_join_the_step_peak() -> None:
    eight = estimate_memory(hunyuan(quant="bnb-int8")).details
    four = estimate_memory(hunyuan(quant="nf4")).details
    torchao = estimate_memory(hunyuan(quant="int8")).details  # weight-only int8: no int32 GEMM
    tokens = eight["tokens"]
    assert eight["denoiser_activation_bytes"] - four["denoiser_activation_bytes"] == \
        tokens * 12288 * 6
    assert torchao["denoiser_activation_bytes"] == four["denoiser_activation_bytes"]


def test_eight_bit_tiled_row_no_longer_15_percent_low() -> None:
    row = next(r for r in read_rows(ROOT / "validation/incoming/memory-2026.csv")
               if r["id"] == "in-mem-hfvideo-hyv-8bit-tiling")
    est, _ = predict(row)
    assert est is not None
    assert abs(est / measured_bytes(row)[0] - 1) < 0.12  # was -14.9 %
