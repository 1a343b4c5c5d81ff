"""Training MFU per card (issue 29, training throughput).

The GB200 is B200 silicon rated at 1,200 W: its datasheet dense peak is 11 % above the B200's,
and nobody has measured what its matmuls sustain (the B200 is measured at 74 % of its peak, the
GB200 takes the 80 % default), so Megatron-Bridge's published GB200 runs came out up to 21 %
faster than measured while its B200 runs sat within 2 %. ``training_gpu_factor[gb200]`` is
fitted by scripts/calibrate.py jointly with the Megatron factor on the calibration rows only."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.constants import per_key
from whichgpu.estimate.speed.hardware import Hardware, hardware
from whichgpu.estimate.speed.training import base_mfu, training_step


def _hw(gpu: str, count: int = 8) -> Hardware:
    return hardware(get_gpu(gpu), count)


def test_the_gb200_factor_is_fitted_below_one_and_other_cards_keep_one():
    assert 0.8 <= per_key("training_gpu_factor", "gb200") < 1
    for gpu in ("b200", "gb300", "h100-sxm", "a100-80gb-sxm"):
        assert per_key("training_gpu_factor", gpu) == 1


def test_it_scales_llm_training_mfu_on_that_card_only():
    factor = per_key("training_gpu_factor", "gb200")
    gb200, why = base_mfu("pretrain", _hw("gb200"), 4096, "megatron")
    b200, _ = base_mfu("pretrain", _hw("b200"), 4096, "megatron")
    assert gb200 == pytest.approx(b200 * factor)  # both Blackwell: the arch factor is shared
    assert f"gb200 x{factor:g}" in why
    # a diffusion LoRA's denoiser efficiency is its own fit, not this one
    den, _ = base_mfu("image-lora", _hw("gb200"), 3072, None, denoiser="mmdit")
    den_b, _ = base_mfu("image-lora", _hw("b200"), 3072, None, denoiser="mmdit")
    assert den == pytest.approx(den_b)


def test_a_gb200_no_longer_trains_a_fifth_faster_than_a_b200():
    # Megatron-Bridge 25.11, Llama 3 8B FP8 at 8,192 tokens on 8 GPUs: 31,508 tokens/s/GPU on
    # GB200 against 30,624 on B200 (1.03x; validation/speed.csv); the datasheet peaks with the
    # sustained fractions alone gave 1.20x (2,500 x 80 % against 2,250 x 74 %)
    kw = dict(task="pretrain", context="8k", gpus=8, batch=2, framework="megatron",
              fp8_training=True)
    w = build_workload("meta-llama/Meta-Llama-3-8B", **kw)
    gb200 = training_step(w, _hw("gb200"), "megatron")["tokens_per_s"]
    b200 = training_step(w, _hw("b200"), "megatron")["tokens_per_s"]
    assert 1.0 < gb200 / b200 < 1.15
