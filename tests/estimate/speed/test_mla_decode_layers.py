"""DeepSeek-architecture (multi-head latent attention) decode in the serving engines' builds of
2025 (issue 30, questions): SGLang 0.4 and vLLM 0.7 decoded DeepSeek-V3/R1 at 30-48 tokens/s at
batch 1 on eight or sixteen Hopper/Ampere GPUs, where the byte and all-reduce terms alone give
150-180: about 250 us per latent-attention layer that the term decode_mla_layer_us holds for
those eras. Today's builds keep none (SGLang 0.5.7 decodes DeepSeek-R1 in 12.8 ms at
concurrency 8 on 8 x H200, which the step without it already gives)."""

from __future__ import annotations

from whichgpu.estimate.speed.hardware import Hardware, hardware
from whichgpu.estimate.speed.llm import decode_step, mla_layer_s
from whichgpu.estimate.validation.rows import gpu_of, workload_of
from whichgpu.estimate.workload import Workload


def _job(model: str, engine: str, version: str, quant: str, gpu: str,
         count: int) -> tuple[Workload, Hardware]:
    """The job as a validation row states it (``version``: an engine version or a month)."""
    row = {"model": model, "engine": engine, "engine_version": version, "quant": quant,
           "gpu": gpu, "gpu_count": str(count), "tp": str(count), "context": "4096",
           "batch": "1"}
    return workload_of(row), hardware(gpu_of(row), count)


def test_only_latent_attention_models_of_the_2025_builds_pay_it() -> None:
    dsv3 = _job("deepseek-ai/DeepSeek-V3", "sglang", "2025-01", "fp8", "h200-sxm", 8)
    assert mla_layer_s(*dsv3, "0.4") > 0.010  # 61 layers x 250 us
    today = _job("deepseek-ai/DeepSeek-V3", "sglang", "", "fp8", "h200-sxm", 8)
    assert mla_layer_s(*today, None) == 0
    qwen = _job("Qwen/Qwen3-30B-A3B", "sglang", "2025-01", "bf16", "h200-sxm", 8)
    assert mla_layer_s(*qwen, "0.4") == 0  # grouped-query attention: no such layers
    trt = _job("deepseek-ai/DeepSeek-V3", "trtllm", "", "fp8", "h200-sxm", 8)
    assert mla_layer_s(*trt, None) == 0


def test_sglang_0_4_batch_one_decode_is_near_its_measurements() -> None:
    """SGLang's own v0.4.1.post2 figure (30.29 tokens/s at batch 1, 8 GPUs, 2024-12) and its
    MTP pull request's baseline (about 44, 2025-02) were not used to set the constant; the
    step without it answered 173 tokens/s."""
    w, hw = _job("deepseek-ai/DeepSeek-V3", "sglang", "0.4.1", "fp8", "h200-sxm", 8)
    rate = 1 / decode_step(w, hw, 1, 384).seconds
    assert 30.29 / 1.25 < rate < 44 * 1.25, rate
    w, hw = _job("deepseek-ai/DeepSeek-V3", "sglang", "0.5.7", "fp8", "h200-sxm", 8)
    assert 1 / decode_step(w, hw, 1, 384).seconds > 2.5 * rate
