"""Issue 36, item 4: the web's answer memo counts what each answer owns against its byte cap
(64 MB, as /readyz and docs/deploy.md say), a pasted config's model included, and the weight
layouts of pasted models are not kept by the hundred beside it.

The review measured a worker at 441 MB after 1,050 distinct pasted configs at the model
bounds: the memo counted none of a pasted answer's ``ModelSpec`` (it skipped every spec as
"shared", right only for presets), and the weight-layout cache kept 256 pasted models' tensor
lists (~3 MB each at 1,024 layers).
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from importlib import resources

from whichgpu.web import services

LLAMA = json.loads(resources.files("whichgpu.models").joinpath(
    "presets", "llama-3.1-8b", "config.json").read_text("utf-8"))


def _pasted(i: int, layers: int = 1024) -> dict:
    """A different Llama-3.1-8B config each time, at the web's bounds (as the review sent)."""
    return {**LLAMA, "num_hidden_layers": layers, "vocab_size": 4_194_304 - i,
            "max_position_embeddings": 131072}


def _typed(i: int) -> None:
    """A pasted config's typed answer, kept as a page keeps it (the REST API keeps only its
    JSON bytes since issue 27: tests/web/test_web_memo_size_walk.py)."""
    from whichgpu.answers import requests as r
    from whichgpu.answers.request import for_web

    services.memory(for_web(r.Memory, body=True).model_validate({"config": _pasted(i)}))


def test_the_memo_counts_the_memory_a_pasted_config_answer_holds(web):
    _typed(0)  # warm
    gc.collect()
    tracemalloc.start()
    try:
        counted_before = services._memo_bytes[0]
        for i in (1, 2):
            _typed(i)
        counted = services._memo_bytes[0] - counted_before
        from whichgpu.estimate.memory import weights

        weights._OWN.clear()  # the layouts are not the memo's: measure the memo alone
        gc.collect()
        held_before = tracemalloc.get_traced_memory()[0]
        services._memo.clear()
        gc.collect()
        held = held_before - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # What clearing the memo freed is what it held; its count may miss allocator overhead
    # (sys.getsizeof), not the pasted model (before: ~10x under).
    assert held > 150_000, held  # two pasted models at 1,024 layers (~95 KB each)
    assert counted >= 0.6 * held, (counted, held)


def test_a_presets_answer_does_not_count_the_shared_preset_model_but_a_pasted_one_counts():
    """The preset's spec is kept once for every answer: counting it per answer would make the
    memo drop the common answers for nothing. A pasted one belongs to its answer alone."""
    from whichgpu.models.config_parse import parse_config
    from whichgpu.models.resolve import resolve_model

    preset = resolve_model("llama-3.1-8b")
    pasted = parse_config(_pasted(1, layers=32), origin="pasted", source="config:pasted")
    assert services._size(preset) < 200  # skipped: owned by the presets
    assert services._size(pasted) > 50 * services._size(preset)
    assert services._size(("answer", pasted)) >= services._size(pasted)


def test_the_weight_layouts_of_pasted_models_are_not_kept_by_the_hundred():
    from whichgpu.estimate.memory import weights
    from whichgpu.models.config_parse import parse_config
    from whichgpu.models.quant import get_quant
    from whichgpu.models.resolve import resolve_model

    q4 = get_quant("q4_k_m")  # a GGUF type: the layout is sized tensor by tensor
    weights._OWN.clear()
    for i in range(weights._OWN_SIZE + 6):
        model = parse_config(_pasted(i, layers=16), origin="pasted", source="config:pasted")
        weights.llm_weight_bytes(model, q4, "q4_k_m")
        assert weights.llm_weight_bytes(model, q4, "q4_k_m") is \
            weights.llm_weight_bytes(model, q4, "q4_k_m")  # still memoised within a question
    assert len(weights._OWN) <= weights._OWN_SIZE
    assert not any(str(m.source) == "config:pasted" for m, _, _ in weights._CACHE.values())
    preset = resolve_model("llama-3.1-8b")
    weights.llm_weight_bytes(preset, q4, "q4_k_m")
    assert any(m is preset for m, _, _ in weights._CACHE.values())
