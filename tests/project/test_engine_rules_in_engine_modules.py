"""One module per engine (issue 35, item 2): an engine's own rule lives in its module
(``whichgpu/engines/<engine>.py``, a hook the estimate asks for) or in its data
(``data/engines.toml``), not in a comparison with its ``Engine`` member somewhere in the engine
packages. The modules still comparing are listed with how many comparisons and what they are;
the list only shrinks (34 in 13 modules when it was written, 21 in 9 after the memory
estimate's MLX runtime, ExLlamaV2/MLX prefill chunk, llama.cpp GGUF file types, the
vLLM/SGLang LoRA slots, the serving engines' commands over mixed cards and ComfyUI's ways to
fit moved, and the offload flags and weight streaming followed traits; 16 in 5 after
llama.cpp's split over mixed cards, its GPU backends and its FP16-accumulate GEMMs became
facts of engines/llamacpp.py, the serving engines over mixed cards the ones with a
``tp_launch``, and llama.cpp's host offload the ``host_offload`` trait)."""

from __future__ import annotations

import re

from paths import ROOT

SRC = ROOT / "src" / "whichgpu"
COMPARISON = re.compile(r"(==|!=|in) *\(?Engine\.")

# module -> comparisons left: the rule each one is
KNOWN = {
    "estimate/speed/diffusion.py": 5,  # ComfyUI's fp16 fast path and its offload
    "estimate/speed/llm.py": 2,  # llama.cpp's backends, MLX's prefill step
    "estimate/speed/serving_engine.py": 3,  # the serving engines' configurations
    "estimate/memory/diffusion.py": 3,  # ComfyUI's residency, diffusers' 8-bit
    "estimate/memory/changes.py": 3,  # llama.cpp's GGUF suggestions
}


def comparisons() -> dict[str, int]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        if "validation" in path.parts:  # the validation rows' own words
            continue
        n = len(COMPARISON.findall(path.read_text("utf-8")))
        if n:
            found[path.relative_to(SRC).as_posix()] = n
    return found


def test_no_new_engine_rule_outside_the_engines_modules() -> None:
    grown = {m: n for m, n in comparisons().items() if n > KNOWN.get(m, 0)}
    assert grown == {}, "a hook in engines/<engine>.py or a trait in data/engines.toml"


def test_the_list_only_shrinks() -> None:
    found = comparisons()
    assert {m: found.get(m, 0) for m in KNOWN} == KNOWN, "lower the count (or drop the line)"


def test_the_engines_modules_hold_no_comparison() -> None:
    assert not any(m.startswith("engines/") for m in comparisons())
