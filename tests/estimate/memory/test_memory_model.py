"""Memory terms, engine semantics, layouts and errors, on hand-built specs."""

import pytest

from specs import LLAMA_31_8B, LLAMA_31_70B, flux_like, llama_like
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.changes import suggestions
from whichgpu.estimate.memory.fit import (
    fits,
    max_concurrency,
    max_context,
    smallest_fits,
)
from whichgpu.estimate.memory.kv import kv_cache
from whichgpu.estimate.memory.training import lora_params
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import MLASpec
from whichgpu.units import GB, KiB


def test_llama3_8b_kv_cache_is_128_kib_per_token():
    kv = kv_cache(LLAMA_31_8B, 4096, 2.0, "transformers")
    assert kv.bytes_per_sequence == 4096 * 128 * KiB


def test_gqa_is_not_ignored():
    mha = llama_like(kv_heads=32)
    assert kv_cache(mha, 4096, 2.0, "transformers").bytes_per_sequence == \
        4 * kv_cache(LLAMA_31_8B, 4096, 2.0, "transformers").bytes_per_sequence


def test_sliding_window_layers_are_capped_by_llamacpp_but_not_by_vllm():
    m = llama_like(sliding=4096)
    long = 32768
    capped = kv_cache(m, long, 2.0, "llamacpp").bytes_per_sequence
    full = kv_cache(m, long, 2.0, "vllm").bytes_per_sequence
    plain = kv_cache(LLAMA_31_8B, long, 2.0, "vllm").bytes_per_sequence
    assert full == plain
    assert capped == pytest.approx(plain / 2 + plain / 2 * 4096 / long, rel=0.01)


def test_mla_caches_the_latent_not_full_heads():
    mla = MLASpec(kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128)
    m = llama_like(layers=61, hidden=7168, heads=128, kv_heads=128, head_dim=192)
    from dataclasses import replace
    m = replace(m, mla=mla)
    latent = kv_cache(m, 1024, 2.0, "vllm").bytes_per_sequence
    assert latent == 61 * 1024 * 576 * 2  # DeepSeek-V3: 576 elements per token per layer
    assert kv_cache(m, 1024, 2.0, "transformers").bytes_per_sequence > 50 * latent


def test_vllm_rounds_context_to_16_token_blocks():
    assert kv_cache(LLAMA_31_8B, 1000, 2.0, "vllm").context_cached == 1008


def test_vllm_keeps_ten_percent_of_the_gpu_free():
    e = estimate_memory(Workload(LLAMA_31_8B, engine="vllm", context=8192))
    assert e.term("engine_reserve") == pytest.approx(0.1 * e.total_bytes, rel=0.01)


def test_kv_dtype_shrinks_the_cache():
    f16 = estimate_memory(Workload(LLAMA_31_8B, context=32768, engine="llamacpp"))
    q8 = estimate_memory(Workload(LLAMA_31_8B, context=32768, engine="llamacpp",
                                  kv_dtype="q8_0"))
    assert q8.term("kv_cache") == pytest.approx(f16.term("kv_cache") * 34 / 64, rel=0.001)


def test_tensor_parallel_splits_weights_and_kv_and_adds_nccl():
    one = estimate_memory(Workload(LLAMA_31_70B, quant="bf16", context=8192, engine="vllm"))
    four = estimate_memory(Workload(LLAMA_31_70B, quant="bf16", context=8192, engine="vllm",
                                    gpus=4))
    assert four.term("weights") == pytest.approx(one.term("weights") / 4, rel=0.001)
    assert four.term("kv_cache") == pytest.approx(one.term("kv_cache") / 4, rel=0.001)
    assert four.term("nccl") > 0 == one.term("nccl")


def test_lora_parameters_are_exact_for_q_and_v():
    # r=8 on q_proj and v_proj of Llama-2-7B: 4,194,304 (litgpt log, estimators.md 5.5)
    m = llama_like(kv_heads=32, intermediate=11008, vocab=32000)
    w = Workload(m, task="lora", lora_rank=8, lora_targets=("q_proj", "v_proj"))
    assert lora_params(w) == 4_194_304


def test_zero3_shards_model_states_over_data_parallel_gpus():
    one = estimate_memory(Workload(LLAMA_31_8B, task="full-ft"))
    eight = estimate_memory(Workload(LLAMA_31_8B, task="full-ft", gpus=8))
    for term in ("weights", "gradients", "optimizer_states", "master_weights"):
        assert eight.term(term) == pytest.approx(one.term(term) / 8, rel=0.001), term
    assert eight.term("zero3_working_set") > 0


def test_model_offload_keeps_only_the_running_component():
    none = estimate_memory(Workload(flux_like(), task="image"))
    model = estimate_memory(Workload(flux_like(), task="image", offload="model"))
    transformer, vae = 11_901_408_320 * 2, 83_819_683 * 2
    # the T5 encoder (9.5 GB) is gone; the denoiser stays through the VAE decode (diffusers)
    assert model.term("weights") <= transformer + vae
    assert none.term("weights") - model.term("weights") > 9e9
    assert model.total_bytes < none.total_bytes


def test_batched_cfg_doubles_denoiser_activations():
    distilled = estimate_memory(Workload(flux_like(), task="image"))
    cfg = estimate_memory(Workload(flux_like(), task="image", cfg=True))
    key = "denoiser_activation_bytes"
    assert cfg.details[key] == pytest.approx(2 * distilled.details[key], rel=1e-6)


def test_every_fit_has_headroom_and_sorted_fitting_first():
    w = Workload(LLAMA_31_70B, quant="q4_k_m", context=8192)
    result = fits(w)
    first_non_fit = next(i for i, f in enumerate(result) if not f.fits)
    assert all(f.fits for f in result[:first_non_fit])
    assert all(not f.fits for f in result[first_non_fit:])
    for f in result:
        assert f.headroom_bytes == f.gpu.usable_memory_bytes - f.per_gpu_bytes


def test_70b_bf16_needs_several_80_gb_gpus():
    w = Workload(LLAMA_31_70B, quant="bf16", context=8192, engine="vllm")
    best = {f.gpu.id: f.count for f in smallest_fits(w)}
    assert best["h100-sxm"] == 2 and best["rtx-4090"] == 8


def test_suggestions_for_a_gpu_say_what_makes_it_fit():
    w = Workload(LLAMA_31_70B, quant="bf16", context=8192, engine="vllm")
    changes = suggestions(w, get_gpu("h100-sxm"))
    texts = [c.description for c in changes]
    assert any("awq" in t for t in texts)
    assert any("2 x h100-sxm" in t for t in texts)
    assert all(c.total_bytes > 0 for c in changes)


def test_serving_capacity_grows_with_memory():
    w = Workload(LLAMA_31_8B, context=8192, engine="vllm")
    small = max_concurrency(w, get_gpu("rtx-4090"))
    big = max_concurrency(w, get_gpu("h100-sxm"))
    assert 0 < small < big
    # the longest context for one sequence on an H100 is bounded by the model's maximum
    assert max_context(w, get_gpu("h100-sxm")) == LLAMA_31_8B.max_context


@pytest.mark.parametrize("bad", [
    dict(context=0), dict(batch=0), dict(batch=-2), dict(task="image"),
    dict(task="lora", lora_rank=100_000), dict(kv_dtype="q3"), dict(engine="tgi"),
    dict(gpus=3, tp=2), dict(zero=5), dict(task="qlora", quant="bf16"), dict(quant="q9_x"),
    dict(task="full-ft", quant="q4_k_m"),
])
def test_impossible_workloads_are_refused_with_a_reason(bad):
    with pytest.raises(InputError):
        Workload(LLAMA_31_8B, **bad)


def test_diffusion_model_cannot_run_llm_tasks():
    with pytest.raises(InputError, match="diffusion"):
        Workload(flux_like(), task="inference")


def test_totals_are_in_a_plausible_range_for_a_7b_model():
    e = estimate_memory(Workload(LLAMA_31_8B, context=4096, engine="transformers"))
    assert 16 * GB < e.total_bytes < 20 * GB
