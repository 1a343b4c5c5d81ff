"""Issue 27: ``memory_need``, the estimate's numbers without its words (the fit checks and the
suggestions ask it dozens of times per question), says exactly what the full estimate says,
and its silent words never reach an estimate that is shown."""

from __future__ import annotations

import pytest

from whichgpu.estimate import memo
from whichgpu.estimate.host import host_with
from whichgpu.estimate.memory import MemoryNeed, estimate_memory, memory_need
from whichgpu.estimate.workload import Workload
from whichgpu.messages import SILENT
from whichgpu.models import resolve_model
from whichgpu.units import GB

_70B = resolve_model("llama-3.1-70b", offline=True)
_8B = resolve_model("llama-3.1-8b", offline=True)
_MOE = resolve_model("mixtral-8x7b", offline=True)
_FLUX = resolve_model("flux.1-dev", offline=True)

#: every builder and the branches that change a total: serving engines, llama.cpp's placement
#: and host RAM (held and not), tensor and pipeline splits, training with ZeRO-3 and CPU
#: offload, paged optimizers, QLoRA, an MoE, a diffusion pipeline
WORKLOADS = {
    "llamacpp-8k": dict(model=_70B, quant="q4_k_m", context=8192),
    "llamacpp-offloaded": dict(model=_70B, quant="q4_k_m", context=8192, gpu_layers=40),
    "llamacpp-small-host": dict(model=_70B, quant="q4_k_m", context=8192, gpu_layers=10,
                                host=host_with(ram_bytes=16 * 10**9)),
    "vllm-tp4-batch": dict(model=_70B, quant="fp8", engine="vllm", gpus=4, batch=64),
    "vllm-tp2-pp2": dict(model=_70B, quant="awq", engine="vllm", gpus=4, tp=2, pp=2),
    "transformers-eager": dict(model=_8B, engine="transformers", flash_attention=False,
                               batch=3),
    "moe-expert-parallel": dict(model=_MOE, engine="vllm", gpus=4, expert_parallel=True),
    "lora": dict(model=_8B, task="lora", context=2048, batch=8),
    "qlora-paged": dict(model=_70B, task="qlora", optimizer="paged-adamw-8bit"),
    "full-zero3-offload": dict(model=_8B, task="full-ft", gpus=8, zero=3, offload="cpu"),
    "pretrain-eager": dict(model=_8B, task="pretrain", flash_attention=False,
                           gradient_checkpointing=False, batch=2),
    "image": dict(model=_FLUX, task="image", quant="fp8", batch=2),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_the_need_is_the_full_estimates_numbers(name: str) -> None:
    w = Workload(**WORKLOADS[name])
    memo.clear()
    need = memory_need(w)  # worked out by the probe: nothing in the memos yet
    memo.clear()
    est = estimate_memory(w)
    assert need == MemoryNeed(est.total_bytes, est.host_total_bytes, est.host_fits)
    assert need.total_bytes > GB  # a real estimate, not an empty one


def test_the_cases_reach_the_host_ram_branches() -> None:
    """The list above exercises what the probe must get right beyond the GPU total."""
    needs = {n: memory_need(Workload(**kw)) for n, kw in WORKLOADS.items()}
    assert needs["llamacpp-offloaded"].host_total_bytes > 0
    assert needs["llamacpp-offloaded"].host_fits
    assert not needs["llamacpp-small-host"].host_fits


def test_a_probed_estimate_shown_afterwards_has_its_words() -> None:
    w = Workload(_70B, quant="q4_k_m", context=8192, batch=7)
    memo.clear()
    memory_need(w)
    est = estimate_memory(w)
    assert est.terms and all(t.formula and t.formula is not SILENT for t in est.terms)
    assert est.assumptions and SILENT not in est.assumptions
    assert "7 sequence(s)" in next(t.formula for t in est.terms if t.name == "kv_cache")


def test_the_need_uses_a_full_estimate_already_made() -> None:
    w = Workload(_8B, task="lora", context=4096, batch=5)
    memo.clear()
    est = estimate_memory(w)
    assert memory_need(w) == (est.total_bytes, est.host_total_bytes, est.host_fits)
