"""llama.cpp's cache rules hold on every backend it runs on, not only CUDA.

A decode step reads the cache llama.cpp keeps: its context padded to 256 cells (and recurrent
states in f32). The speed model's constants are keyed 'llamacpp-metal' / 'llamacpp-vulkan' off
CUDA; that key once reached the cache rules too, so on a Mac or a Vulkan card the step read an
unpadded cache (found in session 5's parse-once review)."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import constants_key, decode_step


@pytest.mark.parametrize("gpu", ["apple-m4-pro", "rtx-4090"])
def test_a_context_reads_the_padded_cache(gpu):
    w = build_workload("llama-3.1-8b", engine="llamacpp", quant="q4_k_m")
    hw = hardware(get_gpu(gpu))

    def read(context: int) -> float:
        return decode_step(w, hw, 1, context).parts["memory-bandwidth"]

    assert read(1000) == read(1024)  # 1000 tokens sit in a 1,024-cell cache
    assert read(1030) > read(1024)  # the next 256 cells


def test_the_mac_is_the_case_with_its_own_constants_key():
    w = build_workload("llama-3.1-8b", engine="llamacpp", quant="q4_k_m")
    assert constants_key(w, hardware(get_gpu("apple-m4-pro"))) == "llamacpp-metal"
