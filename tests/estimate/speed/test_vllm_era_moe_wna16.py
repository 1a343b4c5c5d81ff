"""vLLM 0.7's moe_wna16 Triton kernel for AWQ/GPTQ experts: a kernel path of an engine era.

DeepSeek-V3-AWQ on 8 x H100 under vLLM 0.7.3 decoded at about 33 tokens/s; with today's fused
Marlin MoE path whichgpu predicted 89 (2.7x fast). vLLM PR 13321 measured the Triton kernel of
that time on 8 x A100 at 34.1 tokens/s (batch 1) and its CUDA kernel at 48.1: the CUDA figure
sets the latent-attention layers' cost of that era (decode_mla_layer_us[vllm@0.7]), the Triton
figure the kernel's per-layer cost over it; the H100 row is the check. Today's builds keep the
Marlin path.
"""

from __future__ import annotations

import csv

from paths import ROOT
from whichgpu.estimate.constants import speed_value
from whichgpu.estimate.speed.kernels import era_of, kernel
from whichgpu.estimate.validation.speed import predict
from whichgpu.models.quant import get_quant
from whichgpu.units import parse_engine_version


def _row(row_id: str) -> dict[str, str]:
    with open(ROOT / "validation/speed.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["id"] == row_id:
                return row
    raise AssertionError(row_id)


def test_only_a_0_7_build_takes_the_triton_path() -> None:
    awq = get_quant("awq")
    assert era_of("vllm", parse_engine_version("vLLM 0.7.3")) == "0.7"
    old = kernel("vllm", "decode", "Hopper", awq, parse_engine_version("0.7"))
    assert old is not None and old.efficiency == "triton_wna16_moe"
    for today in (None, "2026-05", "vllm 0.11.0"):
        path = kernel("vllm", "decode", "Hopper", awq,
                      parse_engine_version(today) if today else None)
        assert path is not None and path.efficiency == "marlin_moe", today


def test_the_triton_layer_cost_is_above_marlins() -> None:
    """PR 13321: the Triton kernel took 8.5 ms more per step than the CUDA one over 58 MoE
    layers, more than the fused Marlin MoE kernel's whole cost beyond its bytes."""
    table = speed_value("decode_moe_layer_us")
    assert table["triton_wna16_moe"] > table["marlin_moe"]


def test_the_0_7_step_holds_the_latent_attention_layers() -> None:
    """The 0.7-era step of DeepSeek-V3 pays its 61 MLA layers' cost; today's does not."""
    table = speed_value("decode_mla_layer_us")
    assert table["vllm@0.7"] > 0 and table["default"] == 0


def test_deepseek_v3_awq_on_8xh100_under_vllm_0_7_3() -> None:
    """The 0.7.3 row (not used to set the constant) is within 1.25x; was 2.7x fast."""
    row = _row("dec-vllm-dsv3-awq-8xh100")
    value, _, _ = predict(row)
    assert value is not None
    assert 1 / 1.25 < value / float(row["value"]) < 1.25, value


def test_the_same_row_with_todays_vllm_is_faster() -> None:
    """Without the build named, the same workload takes today's Marlin MoE path."""
    row = dict(_row("dec-vllm-dsv3-awq-8xh100"))
    old, _, _ = predict(row)
    row["engine_version"] = ""
    today, _, _ = predict(row)
    assert old is not None and today is not None
    assert today > 2 * old
