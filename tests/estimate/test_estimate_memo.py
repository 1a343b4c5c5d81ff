"""The estimate memos return what the function returns, forget when a constant changes, and
never confuse two specs (identity, not equality, with the spec held while remembered)."""

from __future__ import annotations

from dataclasses import replace

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.estimate import memo
from whichgpu.estimate.constants import memory_value, overridden
from whichgpu.estimate.memory.kv import kv_cache


def test_memoized_kv_cache_is_the_same_object_and_equals_a_fresh_computation() -> None:
    m = build_workload("llama-3.1-8b").model
    first = kv_cache(m, 8192, 2.0, "vllm")
    assert kv_cache(m, 8192, 2.0, "vllm") is first
    with memo.reference():
        fresh = kv_cache(m, 8192, 2.0, "vllm")
    assert fresh is not first and fresh == first


def test_an_overridden_constant_is_seen_by_the_memoized_function() -> None:
    m = build_workload("llama-3.1-8b").model
    block = int(memory_value("vllm_block_tokens"))
    context = block + 1  # rounded up to two blocks
    before = kv_cache(m, context, 2.0, "vllm")
    assert before.context_cached == 2 * block
    with overridden("memory_constants", "vllm_block_tokens", 1):
        assert kv_cache(m, context, 2.0, "vllm").context_cached == context
    assert kv_cache(m, context, 2.0, "vllm").context_cached == 2 * block


def test_each_spec_object_gets_its_own_entry() -> None:
    m = build_workload("llama-3.1-8b").model
    copy = replace(m)  # equal, another object: its own entry, the same value
    assert copy == m and copy is not m
    assert kv_cache(copy, 4096, 2.0, "vllm") is not kv_cache(m, 4096, 2.0, "vllm")
    assert kv_cache(copy, 4096, 2.0, "vllm") == kv_cache(m, 4096, 2.0, "vllm")
    big = build_workload("llama-3.1-70b").model  # 80 layers x 8 KV heads, not 32 x 8
    assert kv_cache(big, 4096, 2.0, "vllm").bytes_per_sequence == \
        kv_cache(m, 4096, 2.0, "vllm").bytes_per_sequence * 80 // 32


def test_the_reference_path_is_switched_back_on() -> None:
    m = build_workload("llama-3.1-8b").model
    with memo.reference():
        assert kv_cache(m, 1000, 2.0, "vllm") is not kv_cache(m, 1000, 2.0, "vllm")
    assert kv_cache(m, 1000, 2.0, "vllm") is kv_cache(m, 1000, 2.0, "vllm")
