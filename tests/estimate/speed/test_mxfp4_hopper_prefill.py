"""gpt-oss's MXFP4 experts prefill on Hopper in vLLM at the 16-bit weight-only rate (issue 28).

Hopper has no FP4 tensor cores: vLLM runs gpt-oss's MXFP4 experts with 16-bit activations
(Marlin / Triton matmul_ogs, weights dequantized in the kernel), which engine_kernels.toml
prices at the BF16 peak times the weight-only factors. GPUStack's performance lab ran vLLM
0.10.2 on H100 with prefill-dominated random prompts (2,000-32,000 input tokens, 100-200
output, every request sent at once; validation/incoming/serving-2026.csv,
``in-srv-gpustack-gptoss120b-h100-vllm-*``): the modelled input throughput comes out 0.99-1.17x
of measured at TP1 and TP2. A prefill 4x slower (what the ShareGPT run's 24.8 s TTFT alone
suggested) would miss these rows by the same 4x: that TTFT is set by admission, not by the
expert GEMMs.
"""

from __future__ import annotations

import csv

import pytest

from paths import ROOT
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.hardware import arch_key
from whichgpu.estimate.speed.kernels import kernel
from whichgpu.estimate.validation.serving import predict
from whichgpu.models.quant import get_quant

INCOMING = ROOT / "validation" / "incoming" / "serving-2026.csv"
PREFIX = "in-srv-gpustack-gptoss120b-h100-vllm-"


def _prefill_rows() -> list[dict[str, str]]:
    """The runs whose time is prefill: input throughput at prompts of about 2,000 tokens or
    more (the printed totals over the requests: 1,998 for the 2,000-token runs)."""
    with INCOMING.open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["id"].startswith(PREFIX)
                and r["metric"] == "input_tokens_per_s" and float(r["prompt_tokens"]) >= 1000]


def test_hopper_prefills_mxfp4_experts_at_the_16_bit_weight_only_rate() -> None:
    h100 = get_gpu("h100-sxm")
    path = kernel("vllm", "prefill", arch_key(h100), get_quant("mxfp4"))
    assert path is not None
    assert path.efficiency == "weight_only" and path.peak == "bf16"
    assert "matmul_ogs" in path.path  # named for the kernel vLLM picks on SM90
    nvfp4 = kernel("vllm", "prefill", arch_key(h100), get_quant("nvfp4"))
    assert nvfp4 is not None and nvfp4.efficiency == "weight_only" and nvfp4.peak == "bf16"


@pytest.mark.parametrize("row", _prefill_rows(), ids=lambda r: r["id"][len(PREFIX):])
def test_prefill_dominated_runs_match_the_measured_input_throughput(row: dict[str, str]
                                                                     ) -> None:
    modelled = predict(row)[0]
    assert 0.8 <= modelled / float(row["value"]) <= 1.3, (modelled, row["value"])


def test_the_evidence_covers_both_layouts() -> None:
    assert {r["tp"] for r in _prefill_rows()} == {"1", "2"}
    assert len(_prefill_rows()) == 6
