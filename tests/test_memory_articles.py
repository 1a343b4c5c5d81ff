"""The articles' memory figures (S4, S15, S23, S27) come out of the model from explicit inputs."""

import pytest

from specs import LLAMA_2_7B, LLAMA_31_8B, LLAMA_31_70B, flux_like, llama_like, sdxl_like
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import smallest_fits
from whichgpu.estimate.workload import Workload
from whichgpu.units import GB

QWEN_32B_LIKE = llama_like(name="qwen2.5-32b-like", layers=64, hidden=5120, heads=40,
                           kv_heads=8, intermediate=27648, vocab=152064)


def gb(w: Workload, term: str | None = None) -> float:
    e = estimate_memory(w)
    return (e.term(term) if term else e.total_bytes) / GB


def test_s27_70b_4bit_needs_about_43_gb_plus_cache():
    w = Workload(LLAMA_31_70B, quant="q4_k_m", context=8192)
    assert 41 <= gb(w, "weights") <= 45
    assert gb(w, "kv_cache") > 2  # "+ cache": 80 layers x 8k x 2 x 8 x 128 x 2 bytes
    assert gb(w) > gb(w, "weights") + gb(w, "kv_cache")


def test_s27_70b_4bit_normal_context_fits_a_48_gb_card():
    w = Workload(LLAMA_31_70B, quant="q4_k_m", context=8192)
    assert estimate_memory(w).total_bytes <= get_gpu("rtx-a6000").usable_memory_bytes


def test_s27_70b_fp8_needs_about_71_gb_plus_cache():
    w = Workload(LLAMA_31_70B, quant="fp8", context=8192, engine="vllm")
    assert 68 <= gb(w, "weights") <= 74


def test_s27_70b_fp8_fits_h200_better_than_h100():
    w = Workload(LLAMA_31_70B, quant="fp8", context=8192, engine="vllm")
    total = estimate_memory(w).total_bytes
    assert total <= get_gpu("h200-sxm").usable_memory_bytes
    assert get_gpu("h100-sxm").usable_memory_bytes - total < 10 * GB  # tight or no room


def test_s27_full_finetune_8b_about_70_gb_with_8bit_optimizer():
    # bf16 weights and gradients, 8-bit AdamW, no fp32 master copy, 2k tokens, batch 1
    w = Workload(LLAMA_31_8B, task="full-ft", optimizer="adamw-8bit", master_weights=False,
                 context=2048)
    assert 60 <= gb(w) <= 80


def test_s27_qlora_70b_about_48_gb_with_short_sequences():
    w = Workload(LLAMA_31_70B, task="qlora", context=512)
    assert 42 <= gb(w) <= 52


def test_s4_lora_on_7b_needs_14_to_20_gb():
    w = Workload(LLAMA_2_7B, task="lora", context=512, gradient_checkpointing=True)
    assert 14 <= gb(w) <= 20


def test_s4_qlora_on_7b_fits_well_within_24_gb():
    w = Workload(LLAMA_2_7B, task="qlora", context=2048)
    assert gb(w) <= 20


def test_s23_80_gb_holds_70b_4bit_with_long_context():
    w = Workload(LLAMA_31_70B, quant="q4_k_m", context=32768)
    assert estimate_memory(w).total_bytes <= get_gpu("a100-80gb-sxm").usable_memory_bytes
    assert estimate_memory(w).total_bytes > get_gpu("rtx-a6000").usable_memory_bytes


def test_s23_80_gb_holds_32b_in_fp8():
    w = Workload(QWEN_32B_LIKE, quant="fp8", context=8192, engine="vllm")
    assert estimate_memory(w).total_bytes <= get_gpu("h100-sxm").usable_memory_bytes


def test_s23_80_gb_holds_full_finetune_of_8b_only_with_lean_optimizer_states():
    lean = Workload(LLAMA_31_8B, task="full-ft", optimizer="adamw-8bit", master_weights=False,
                    context=2048)
    textbook = Workload(LLAMA_31_8B, task="full-ft", context=2048)  # AdamW + fp32 master
    h100 = get_gpu("h100-sxm").usable_memory_bytes
    assert estimate_memory(lean).total_bytes <= h100 < estimate_memory(textbook).total_bytes


def test_s15_rule_of_thumb_is_too_low_for_full_finetuning():
    n = LLAMA_31_8B.params_total / 1e9
    w = Workload(LLAMA_31_8B, task="full-ft", context=2048)
    states = sum(estimate_memory(w).term(t) for t in
                 ("weights", "gradients", "master_weights", "optimizer_states")) / GB
    assert states == pytest.approx(16 * n, rel=0.02)  # 2 + 2 + 4 + 8 bytes/param
    assert states > 3 * (4 * n)  # S15's 4 x N is far too low


def test_s15_rule_of_thumb_is_close_for_16_bit_inference_weights():
    n = LLAMA_31_8B.params_total / 1e9
    w = Workload(LLAMA_31_8B, quant="bf16", context=4096)
    assert gb(w, "weights") == pytest.approx(2 * n, rel=0.01)
    assert gb(w) > 2 * n  # the cache and the runtime come on top


def test_s27_image_models_need_10_to_24_gb():
    # FLUX in fp8 the way 24 GB cards run it: the text encoder leaves the GPU after encoding
    flux_fp8 = Workload(flux_like(), task="image", quant="fp8", resolution=(1024, 1024),
                        offload="model")
    sdxl = Workload(sdxl_like(), task="image", resolution=(1024, 1024))
    for w in (flux_fp8, sdxl):
        assert 6 <= gb(w) <= 24, w.model.name
    assert estimate_memory(flux_fp8).total_bytes <= get_gpu("rtx-4090").usable_memory_bytes


def test_flux_in_bf16_needs_offload_on_a_24_gb_card():
    w = Workload(flux_like(), task="image", resolution=(1024, 1024))
    assert estimate_memory(w).total_bytes > get_gpu("rtx-4090").usable_memory_bytes
    fitting = {f.gpu.id for f in smallest_fits(w) if f.count == 1}
    assert "rtx-4090" not in fitting and "a100-80gb-sxm" in fitting
