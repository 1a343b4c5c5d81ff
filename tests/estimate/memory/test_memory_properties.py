"""Property tests: memory is monotonic in what it should be, terms are never negative.

Sharding claim, narrowed: from 2 GPUs upward, more GPUs never raise the memory per GPU. Going
from 1 GPU to 2 can raise it for a small model, because a multi-GPU job adds NCCL buffers
(392 MiB per GPU) that can outweigh half of a small model's weights and cache; that exception
is tested below as well, so that the claim stays exact.
"""

from dataclasses import replace

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from specs import flux_like, llama_like, sdxl_like
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.workload import Workload
from whichgpu.models.spec import MLASpec, MoESpec

archs = st.builds(
    lambda layers, heads, kv_div, hd, mult, vocab, tied: llama_like(
        layers=layers, hidden=heads * hd, heads=heads, kv_heads=max(1, heads // kv_div),
        head_dim=hd, intermediate=heads * hd * mult, vocab=vocab, tied=tied),
    st.integers(2, 48), st.sampled_from([8, 16, 32, 64]), st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([64, 128]), st.sampled_from([2, 3, 4]), st.sampled_from([32000, 128256]),
    st.booleans())
moe_archs = st.builds(
    lambda layers, experts, top, ie: llama_like(
        name="moe-like", layers=layers, hidden=2048, heads=16, kv_heads=4, intermediate=ie,
        moe=MoESpec(num_experts=experts, experts_per_token=top, expert_intermediate_size=ie,
                    moe_layers=layers)),
    st.integers(2, 24), st.sampled_from([8, 16, 64]), st.sampled_from([1, 2, 4]),
    st.sampled_from([512, 1408]))
mla_archs = st.builds(
    lambda layers, rank: replace(
        llama_like(name="mla-like", layers=layers, hidden=2048, heads=16, kv_heads=16,
                   head_dim=192),
        mla=MLASpec(kv_lora_rank=rank, qk_rope_head_dim=64, qk_nope_head_dim=128,
                    v_head_dim=128)),
    st.integers(2, 32), st.sampled_from([256, 512]))
any_llm = st.one_of(archs, moe_archs, mla_archs)
engines = st.sampled_from(["llamacpp", "vllm", "sglang", "trtllm", "transformers", "exllamav2"])
tasks = st.sampled_from(["inference", "lora", "qlora", "full-ft"])
# Chains of formats where every kind of tensor takes at least as many bits as before.
GGUF_CHAIN = ["q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "q8_0", "bf16", "fp32"]
HF_CHAIN = ["awq", "nf4", "fp8", "gptq-int8", "bf16", "fp32"]
DIFFUSION = [flux_like(), sdxl_like()]


def total(**kw) -> int:
    return estimate_memory(Workload(**kw)).total_bytes


def total_or_skip(**kw) -> int:
    """A layout the model cannot take (heads, layers) is refused; such draws are skipped."""
    try:
        w = Workload(**kw)
    except InputError:
        assume(False)
    return estimate_memory(w).total_bytes


@settings(max_examples=60, deadline=None)
@given(any_llm, engines, st.integers(1, 65536), st.integers(1, 65536), st.integers(1, 64))
def test_memory_never_decreases_with_context_or_batch(model, engine, c1, c2, batch):
    lo, hi = sorted((c1, c2))
    assert total(model=model, engine=engine, context=lo, batch=batch) <= \
        total(model=model, engine=engine, context=hi, batch=batch)
    assert total(model=model, engine=engine, context=lo, batch=batch) <= \
        total(model=model, engine=engine, context=lo, batch=batch + 1)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(DIFFUSION), st.integers(256, 2048), st.integers(256, 2048),
       st.integers(1, 4), st.sampled_from(["none", "model", "sequential"]), st.booleans())
def test_diffusion_memory_never_decreases_with_resolution_or_batch(model, s1, s2, batch,
                                                                     offload, tiling):
    lo, hi = sorted((s1 // 64 * 64, s2 // 64 * 64))
    kw = dict(model=model, task="image", offload=offload, vae_tiling=tiling)
    assert total(resolution=(lo, lo), batch=batch, **kw) <= \
        total(resolution=(hi, hi), batch=batch, **kw)
    assert total(resolution=(lo, lo), batch=batch, **kw) <= \
        total(resolution=(lo, lo), batch=batch + 1, **kw)


@settings(max_examples=40, deadline=None)
@given(any_llm, st.sampled_from(["lora", "qlora"]), st.integers(1, 64), st.integers(1, 64))
def test_memory_never_decreases_with_lora_rank(model, task, r1, r2):
    lo, hi = sorted((r1, r2))
    assert total(model=model, task=task, lora_rank=lo) <= total(model=model, task=task,
                                                                 lora_rank=hi)


@settings(max_examples=40, deadline=None)
@given(any_llm, engines)
def test_memory_never_decreases_with_precision_bits(model, engine):
    for chain in (GGUF_CHAIN, HF_CHAIN):
        totals = [total(model=model, quant=q, engine=engine) for q in chain]
        assert totals == sorted(totals), (chain, totals)


@settings(max_examples=20, deadline=None)
@given(any_llm)
def test_lora_memory_never_decreases_with_base_precision_bits(model):
    totals = [total(model=model, task="lora", quant=q) for q in HF_CHAIN]
    assert totals == sorted(totals)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(DIFFUSION), st.sampled_from(["none", "model"]))
def test_diffusion_memory_never_decreases_with_precision_bits(model, offload):
    totals = [total(model=model, task="image", quant=q, offload=offload)
              for q in ("nf4", "fp8", "bf16", "fp32")]
    assert totals == sorted(totals)


@settings(max_examples=60, deadline=None)
@given(any_llm, tasks, engines, st.sampled_from([(2, 4), (4, 8), (2, 8)]))
def test_more_gpus_never_increase_memory_per_gpu_from_two_up(model, task, engine, counts):
    a, b = counts
    kw = dict(model=model, task=task, engine=engine if task == "inference" else None)
    assert total_or_skip(gpus=b, **kw) <= total_or_skip(gpus=a, **kw)


def test_one_to_two_gpus_can_raise_a_small_model_by_the_nccl_buffers():
    small = llama_like(name="small", layers=2, hidden=512, heads=8, kv_heads=8,
                       intermediate=1024, vocab=32000)
    one = estimate_memory(Workload(small, engine="vllm", context=512))
    two = estimate_memory(Workload(small, engine="vllm", context=512, gpus=2))
    assert two.total_bytes > one.total_bytes
    # ... and the NCCL buffers are the reason: without them, two GPUs hold less
    assert two.total_bytes - two.term("nccl") * (1 / 0.9) < one.total_bytes


@settings(max_examples=60, deadline=None)
@given(any_llm, tasks, engines, st.integers(1, 32768), st.integers(1, 16),
       st.sampled_from([1, 2, 4]))
def test_every_term_is_non_negative(model, task, engine, context, batch, gpus):
    try:
        w = Workload(model, task=task, engine=engine if task == "inference" else None,
                     context=context, batch=batch, gpus=gpus)
    except InputError:
        assume(False)
    e = estimate_memory(w)
    assert all(t.bytes >= 0 for t in e.terms)
    assert e.total_bytes == sum(e.breakdown.values())


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(DIFFUSION), st.sampled_from(["image", "image-lora"]),
       st.sampled_from(["none", "model", "sequential"]), st.integers(1, 4))
def test_every_diffusion_term_is_non_negative(model, task, offload, batch):
    if task == "image-lora" and offload != "none":
        return
    e = estimate_memory(Workload(model, task=task, offload=offload, batch=batch))
    assert all(t.bytes >= 0 for t in e.terms)
    assert e.total_bytes == sum(e.breakdown.values())
