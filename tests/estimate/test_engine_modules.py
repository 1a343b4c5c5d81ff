"""What an engine does in code lives in one module, ``whichgpu/engines/<engine>.py`` (issue 35,
part 2: adding an engine is one module plus data).

:func:`whichgpu.engines.module` finds that module by the engine's name; the memory estimate asks
it for ``memory_reserve`` and the export for ``launch`` and ``rocm``, so a new engine's module is
used with no change anywhere else. The thought experiment runs here on MLX (its module adds
a reserve); tests/estimate/test_engine_added_by_module_and_data.py runs it on a new engine.
"""

from __future__ import annotations

import importlib.machinery
import inspect
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from specs import LLAMA_31_8B
from whichgpu import engines
from whichgpu.engines import HOOKS, module
from whichgpu.estimate.memo import reference
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.estimate.workload import Workload
from whichgpu.units import GiB
from whichgpu.vocabulary import Engine

PACKAGE = Path(engines.__file__).parent
PARAMETERS = {"memory_reserve": ["used", "kv_gpu"], "runtime_term": [],
              "prefill_note": ["attention"], "gguf_file_type": ["name"],
              "lora_slots": ["adapters", "rank"], "tp_launch": ["tp", "pp"], "uneven_cards": [],
              "fit_note": ["offload", "need", "tiled"],
              "automatic_note": ["change", "short"],
              "launch": ["o", "w"], "rocm": ["out", "why"]}


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    module.cache_clear()
    yield
    module.cache_clear()


def _fake_mlx(monkeypatch: pytest.MonkeyPatch, **hooks: object) -> None:
    """MLX's module with ``hooks`` added to what it defines."""
    real = module(Engine.MLX)
    fake = types.ModuleType("whichgpu.engines.mlx")
    fake.__spec__ = importlib.machinery.ModuleSpec("whichgpu.engines.mlx", None)
    for name in HOOKS:
        if hasattr(real, name):
            setattr(fake, name, getattr(real, name))
    for name, value in hooks.items():
        setattr(fake, name, value)
    monkeypatch.setitem(sys.modules, "whichgpu.engines.mlx", fake)
    module.cache_clear()


def test_each_module_is_named_for_an_engine_and_defines_hooks_with_their_parameters() -> None:
    names = sorted(p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert names == ["comfyui", "exllamav2", "llamacpp", "mlx", "sglang", "trtllm", "vllm"]
    for name in names:
        found = module(Engine(name))
        assert found is not None and found.__name__ == f"whichgpu.engines.{name}"
        hooks = [h for h in HOOKS if hasattr(found, h)]
        assert hooks, f"engines/{name}.py defines none of {HOOKS}"
        for hook in hooks:
            assert list(inspect.signature(getattr(found, hook)).parameters) == PARAMETERS[hook]


def test_which_engine_does_what() -> None:
    def hooks(engine: str | None) -> set[str]:
        return {h for h in HOOKS if hasattr(module(engine), h)}

    assert hooks(Engine.VLLM) == {"memory_reserve", "lora_slots", "tp_launch", "uneven_cards",
                                  "launch", "rocm"}
    # fit_note: what SGLang Diffusion needs to fit a pipeline, in its name (fix8)
    assert hooks(Engine.SGLANG) == {"memory_reserve", "lora_slots", "tp_launch", "launch",
                                    "fit_note"}
    assert hooks(Engine.TRTLLM) == {"memory_reserve", "tp_launch"}  # no launch file for it
    assert hooks(Engine.LLAMACPP) == {"gguf_file_type", "launch", "rocm"}
    assert hooks(Engine.MLX) == {"runtime_term"}  # Metal's runtime, not a CUDA context
    assert hooks(Engine.EXLLAMAV2) == {"prefill_note"}
    # its lowvram mode, its model management, what it does unasked
    assert hooks(Engine.COMFYUI) == {"fit_note", "automatic_note"}
    # an engine without a module, a trainer's name, no engine: nothing engine-specific
    assert module(Engine.TRANSFORMERS) is module("axolotl") is module(None) is None


def test_the_memory_estimate_uses_the_engines_own_reserve() -> None:
    """vLLM keeps 10 % of the card free (memory_constants.toml); transformers has no module
    and keeps nothing back."""
    vllm = estimate_memory(Workload(LLAMA_31_8B, engine=Engine.VLLM, context=8192))
    assert vllm.term("engine_reserve") == pytest.approx(0.1 * vllm.total_bytes, rel=0.01)
    plain = estimate_memory(Workload(LLAMA_31_8B, engine=Engine.TRANSFORMERS, context=8192))
    assert plain.term("engine_reserve") == 0


def test_a_new_engine_is_its_module(monkeypatch: pytest.MonkeyPatch,
                                    fresh_registry: None) -> None:
    """MLX gains a reserve by its module alone: the estimate picks it up, nothing else
    edited."""
    w = Workload(LLAMA_31_8B, engine=Engine.MLX, context=8192)
    with reference():  # no memo: the second estimate is computed again
        before = estimate_memory(w)
    assert before.term("engine_reserve") == 0

    def reserve(used: int, kv_gpu: float) -> MemoryTerm:
        return MemoryTerm("engine_reserve", GiB, "a test reserve", "", "test")

    _fake_mlx(monkeypatch, memory_reserve=reserve)
    with reference():
        after = estimate_memory(w)
    assert after.term("engine_reserve") == GiB
    assert after.total_bytes == before.total_bytes + GiB


def test_over_cards_of_different_sizes_each_serving_engine_writes_its_own_command() -> None:
    """estimate/mixed_cards.py asks the engine's module (vLLM adds its pipeline degree)."""
    def launch(engine: Engine, tp: int, pp: int) -> str:
        return module(engine).tp_launch(tp, pp)  # type: ignore[union-attr]

    assert launch(Engine.VLLM, 2, 1) == "vllm serve MODEL --tensor-parallel-size 2"
    assert launch(Engine.VLLM, 2, 2) == ("vllm serve MODEL --tensor-parallel-size 2 "
                                         "--pipeline-parallel-size 2")
    assert launch(Engine.SGLANG, 4, 2) == "python -m sglang.launch_server --model-path MODEL --tp 4"
    assert launch(Engine.TRTLLM, 2, 1) == "trtllm-serve MODEL --tp_size 2"


def test_comfyui_says_in_its_own_words_what_it_does_to_fit() -> None:
    """estimate/diffusion_parallel.py asks ComfyUI's module; diffusers keeps the generic
    sentences."""
    from whichgpu.estimate.diffusion_parallel import adapted_note
    from whichgpu.models import resolve_model

    flux = resolve_model("flux.1-dev")

    def note(engine: Engine, offload: str) -> str:
        w = Workload(flux, task="image", engine=engine, offload=offload)
        return adapted_note(w, w, int(30e9)).id

    assert note(Engine.COMFYUI, "sequential") == "diffusion.fit.comfy_partial"
    assert note(Engine.COMFYUI, "model") == "diffusion.fit.comfy"
    assert note(Engine.DIFFUSERS, "sequential") == "diffusion.fit.sequential"
    assert note(Engine.DIFFUSERS, "model") == "diffusion.fit.model"
