"""MLX-LM in code: its runtime's memory (Metal's, not a CUDA context). Its traits, its prefill
chunk and its speed are data (``data/engines.toml``, ``estimate/data/``)."""

from __future__ import annotations

from whichgpu.estimate.constants import memory_constant
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.messages import data_text, msg
from whichgpu.units import MiB


def runtime_term() -> MemoryTerm:
    """No CUDA context: Metal's own runtime, of the order of llama.cpp's minimum (taken)."""
    c = memory_constant("llamacpp_cuda_minimum_mib")
    return MemoryTerm("runtime", int(c.value * MiB),
                      msg("term.runtime.mlx", "Metal runtime (llama.cpp's minimum taken for "
                          "MLX)"), data_text(c.note) if c.note is not None else None, c.source)
