"""Property tests: memory is monotonic in what it should be, terms are never negative."""

from hypothesis import given, settings
from hypothesis import strategies as st

from specs import llama_like
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.workload import Workload

archs = st.builds(
    lambda layers, heads, kv_div, hd, mult, vocab, tied: llama_like(
        layers=layers, hidden=heads * hd, heads=heads, kv_heads=max(1, heads // kv_div),
        head_dim=hd, intermediate=heads * hd * mult, vocab=vocab, tied=tied),
    st.integers(2, 48), st.sampled_from([8, 16, 32, 64]), st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([64, 128]), st.sampled_from([2, 3, 4]), st.sampled_from([32000, 128256]),
    st.booleans())
engines = st.sampled_from(["llamacpp", "vllm", "sglang", "trtllm", "transformers", "exllamav2"])
tasks = st.sampled_from(["inference", "lora", "qlora", "full-ft"])
# Chains of formats where every kind of tensor takes at least as many bits as before.
GGUF_CHAIN = ["q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "q8_0", "bf16", "fp32"]
HF_CHAIN = ["awq", "nf4", "fp8", "gptq-int8", "bf16", "fp32"]


def total(**kw) -> int:
    return estimate_memory(Workload(**kw)).total_bytes


@settings(max_examples=60, deadline=None)
@given(archs, engines, st.integers(1, 65536), st.integers(1, 65536), st.integers(1, 64))
def test_memory_never_decreases_with_context_or_batch(model, engine, c1, c2, batch):
    lo, hi = sorted((c1, c2))
    assert total(model=model, engine=engine, context=lo, batch=batch) <= \
        total(model=model, engine=engine, context=hi, batch=batch)
    assert total(model=model, engine=engine, context=lo, batch=batch) <= \
        total(model=model, engine=engine, context=lo, batch=batch + 1)


@settings(max_examples=40, deadline=None)
@given(archs, st.sampled_from(["lora", "qlora"]), st.integers(1, 64), st.integers(1, 64))
def test_memory_never_decreases_with_lora_rank(model, task, r1, r2):
    lo, hi = sorted((r1, r2))
    assert total(model=model, task=task, lora_rank=lo) <= total(model=model, task=task,
                                                                 lora_rank=hi)


@settings(max_examples=40, deadline=None)
@given(archs, engines)
def test_memory_never_decreases_with_precision_bits(model, engine):
    for chain in (GGUF_CHAIN, HF_CHAIN):
        totals = [total(model=model, quant=q, engine=engine) for q in chain]
        assert totals == sorted(totals), (chain, totals)


@settings(max_examples=20, deadline=None)
@given(archs)
def test_lora_memory_never_decreases_with_base_precision_bits(model):
    totals = [total(model=model, task="lora", quant=q) for q in HF_CHAIN]
    assert totals == sorted(totals)


@settings(max_examples=40, deadline=None)
@given(archs, tasks, st.sampled_from([(2, 4), (4, 8), (2, 8)]))
def test_more_gpus_never_increase_memory_per_gpu(model, task, counts):
    a, b = counts
    heads = model.num_attention_heads
    if task == "inference" and (heads % b or heads % a):
        return
    assert total(model=model, task=task, gpus=b) <= total(model=model, task=task, gpus=a)


@settings(max_examples=60, deadline=None)
@given(archs, tasks, engines, st.integers(1, 32768), st.integers(1, 16),
       st.sampled_from([1, 2, 4]))
def test_every_term_is_non_negative(model, task, engine, context, batch, gpus):
    if model.num_attention_heads % gpus:
        return
    e = estimate_memory(Workload(model, task=task, engine=engine, context=context, batch=batch,
                                 gpus=gpus))
    assert all(t.bytes >= 0 for t in e.terms)
    assert e.total_bytes == sum(e.breakdown.values())
