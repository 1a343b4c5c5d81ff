"""Expert parallelism with data-parallel attention (vLLM ``-dp N --enable-expert-parallel``):
the routed experts spread over every GPU, everything else and a whole sequence's KV cache stay
on each data-parallel rank (issue 30: the Qwen3-Coder-480B question on 8 x H20)."""

from __future__ import annotations

import pytest

from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.weights import workload_weight_bytes
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation import questions as vq
from whichgpu.estimate.validation.rows import workload_of

_ROW = {"model": "Qwen/Qwen3-Coder-480B-A35B-Instruct", "task": "inference", "quant": "fp8",
        "engine": "vllm", "gpu": "h20", "gpu_count": "8", "context": "262144", "batch": "1"}


def _terms(row: dict[str, str]) -> dict[str, int]:
    return {t.name: t.bytes for t in estimate_memory(workload_of(row)).terms}


def test_experts_spread_over_every_gpu_and_the_kv_cache_stays_whole():
    ep = workload_of({**_ROW, "tp": "1", "settings": "expert_parallel=true"})
    assert ep.dp_degree == 8 and ep.tp_degree == 1
    wb = workload_weight_bytes(ep)
    assert wb.experts > 0.9 * wb.total  # an MoE: nearly every byte is a routed expert
    terms = _terms({**_ROW, "tp": "1", "settings": "expert_parallel=true"})
    assert terms["weights"] == pytest.approx((wb.total - wb.experts) + wb.experts / 8, rel=1e-6)
    tp8 = _terms({**_ROW, "tp": "8"})
    # one sequence's whole cache on each rank, against an eighth of it under tensor parallel
    assert terms["kv_cache"] == pytest.approx(8 * tp8["kv_cache"], rel=0.01)
    # vLLM's own figure for this model at 262,144 tokens: '62.00 GiB KV cache is needed'
    assert terms["kv_cache"] / 2**30 == pytest.approx(62.0, abs=0.1)
    # replicas without expert parallelism would hold the whole model on each card
    dp = _terms({**_ROW, "tp": "1"})
    assert terms["weights"] < dp["weights"] / 4


def test_expert_parallel_is_refused_where_there_are_no_experts_to_spread():
    with pytest.raises(InputError, match="experts"):
        workload_of({**_ROW, "model": "llama-3.1-8b", "quant": "bf16", "tp": "1",
                     "settings": "expert_parallel=true"})
    with pytest.raises(InputError):
        workload_of({**_ROW, "engine": "llamacpp", "quant": "q4_k_m", "tp": "1",
                     "settings": "expert_parallel=true"})


def test_the_recipe_question_is_answered_in_its_own_layout():
    row = next(r for r in read_rows(default_path("questions"))
               if r["id"] == "q-8xh20-qwen3coder480b-fp8-dp8-256k-nofit")
    assert "expert_parallel" in row["settings"] and row["tp"] == "1"
    assert vq.judge(row).judgement == vq.Judgement.RIGHT
