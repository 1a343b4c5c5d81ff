"""FP8 training as a precision (issue 29, item 6): an FP8 format on full fine-tuning or
pre-training means FP8 matmuls on bf16 weights, answered instead of refused."""

from __future__ import annotations

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.speed import estimate_speed


def test_quant_fp8_on_pretraining_is_fp8_training_on_bf16_weights():
    w = build_workload("llama-3.1-8b", task="pretrain", quant="fp8", context="4k", gpus=8)
    assert w.fp8_training and w.quant_format.linear_bits == 16
    same = build_workload("llama-3.1-8b", task="pretrain", fp8_training=True, context="4k",
                          gpus=8)
    assert estimate_memory(w).total_bytes == estimate_memory(same).total_bytes
    assert any("FP8 training" in str(a) for a in estimate_memory(w).assumptions)


def test_fp8_training_runs_faster_than_bf16_on_a_card_with_fp8():
    gpu = get_gpu("h100-sxm")
    fp8 = estimate_speed(build_workload("llama-3.1-8b", task="full-ft", quant="fp8-e4m3",
                                        context="4k", gpus=8), gpu, 8)
    bf16 = estimate_speed(build_workload("llama-3.1-8b", task="full-ft", context="4k",
                                         gpus=8), gpu, 8)
    assert fp8.precision == "fp8"
    assert fp8.rate("tokens_per_s").typical > bf16.rate("tokens_per_s").typical


def test_int8_weights_are_still_refused_for_full_fine_tuning():
    import pytest

    from whichgpu.errors import InputError

    with pytest.raises(InputError):
        build_workload("llama-3.1-8b", task="full-ft", quant="int8")
