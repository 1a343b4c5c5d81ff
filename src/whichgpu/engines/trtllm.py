"""TensorRT-LLM in code: the memory its KV pool leaves free (``free_gpu_memory_fraction``).
Its traits and speed are data (``data/engines.toml``, ``estimate/data/``); whichgpu writes no
launch command for it (an export gets a placeholder)."""

from __future__ import annotations

from whichgpu.estimate.constants import memory_constant
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.messages import msg


def memory_reserve(used: int, kv_gpu: float) -> MemoryTerm:
    """The KV pool is a fraction of the free memory: the rest of it is reserved."""
    c = memory_constant("trtllm_free_gpu_memory_fraction")
    return MemoryTerm("engine_reserve", int(kv_gpu / c.value - kv_gpu),
                      msg("term.reserve.trtllm", "TensorRT-LLM gives {share:.0%} of the free "
                          "memory to the KV pool", share=c.value),
                      msg("term.reserve.trtllm.why", "free_gpu_memory_fraction default"),
                      c.source)



def tp_launch(tp: int, pp: int) -> str:
    """Serving over cards of different sizes, in equal tensor-parallel shards."""
    return f"trtllm-serve MODEL --tp_size {tp}"
