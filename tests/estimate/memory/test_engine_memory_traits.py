"""The memory estimate asks an engine's traits (``data/engines.toml``), not its name, for two
behaviours (issue 35, part 2: adding an engine is one module plus data):

- ``caching_allocator``: KV cache and activations allocated as the engine runs, through
  PyTorch's caching allocator, get a fragmentation margin (``fragmentation_fraction``);
- ``host_offload``: the engine places the weights between the GPU and host RAM itself
  (llama.cpp), so the estimate uses its placement and the job may spill to host RAM.

Each trait is given to MLX (which has neither) by data alone, and the estimate follows.
"""

from __future__ import annotations

import dataclasses

import pytest

from specs import LLAMA_31_8B
from whichgpu import engines
from whichgpu.errors import InputError
from whichgpu.estimate.constants import memory_constant
from whichgpu.estimate.memo import reference
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.offload_plan import no_offload_reason, supports_offload
from whichgpu.estimate.workload import Workload
from whichgpu.vocabulary import Engine


def _give(monkeypatch: pytest.MonkeyPatch, engine: Engine, trait: str) -> None:
    """``engine`` with ``trait`` added to its row of engines.toml (this test only)."""
    table = dict(engines.engine_table())
    row = table[engine]
    table[engine] = dataclasses.replace(row, traits=row.traits | {trait})
    monkeypatch.setattr(engines, "engine_table", lambda: table)


def test_the_shipped_table_gives_each_trait_to_the_engines_that_behave_so() -> None:
    assert engines.engines_with("caching_allocator") == (Engine.TRANSFORMERS,
                                                         Engine.EXLLAMAV2)
    assert engines.engines_with("host_offload") == (Engine.LLAMACPP,)
    assert engines.engines_with("streams_weights") == (Engine.DIFFUSERS, Engine.COMFYUI)


def test_a_caching_allocator_adds_the_fragmentation_margin_on_kv_and_activations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = Workload(LLAMA_31_8B, engine=Engine.MLX, context=8192)
    with reference():
        before = estimate_memory(w)
    assert before.term("fragmentation") == 0
    _give(monkeypatch, Engine.MLX, "caching_allocator")
    with reference():
        after = estimate_memory(w)
    share = memory_constant("fragmentation_fraction").value
    dynamic = after.term("kv_cache") + after.term("activations")
    assert after.term("fragmentation") == pytest.approx(share * dynamic, rel=1e-6, abs=2)
    assert after.total_bytes > before.total_bytes


def test_host_offload_makes_the_engine_place_weights_and_spill(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = Workload(LLAMA_31_8B, engine=Engine.MLX, context=8192)
    with reference():
        assert estimate_memory(w).details["placement"] is None  # every weight on the GPU
    assert not supports_offload(w)
    assert no_offload_reason(w) is not None  # "MLX-LM keeps every weight on the GPU ..."
    _give(monkeypatch, Engine.MLX, "host_offload")
    assert supports_offload(w)
    assert no_offload_reason(w) is None
    with reference():
        placed = estimate_memory(w)
    assert placed.details["placement"] is not None  # llama.cpp's placement of the weights


def test_the_offload_flags_follow_the_host_offload_trait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """-ngl / --n-cpu-moe / -ot are taken by an engine that places the weights itself (the
    trait), not by a name: MLX refuses them until its table says host_offload."""
    with pytest.raises(InputError, match="offload flags"):
        Workload(LLAMA_31_8B, engine=Engine.MLX, gpu_layers=20)
    _give(monkeypatch, Engine.MLX, "host_offload")
    assert Workload(LLAMA_31_8B, engine=Engine.MLX, gpu_layers=20).gpu_layers == 20
