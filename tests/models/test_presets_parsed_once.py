"""A preset's ModelSpec is parsed once per process (issue 27): the next question about it gets
the same frozen spec, so what is remembered per spec (a GGUF recipe) is not worked out again."""

from __future__ import annotations

import pytest

from whichgpu.models.preset_index import find_preset, load_preset
from whichgpu.models.resolve import resolve_model


def test_the_same_preset_gives_the_same_spec() -> None:
    p = find_preset("llama-3.1-8b")
    assert p is not None
    assert load_preset(p) is load_preset(p)
    assert resolve_model("llama-3.1-8b") is resolve_model("llama-3.1-8b")


def test_a_hub_id_of_the_preset_keeps_its_own_spec() -> None:
    p = find_preset("llama-3.1-8b")
    assert p is not None and p.hub_ids
    plain, by_hub = load_preset(p), load_preset(p, requested=p.hub_ids[-1])
    assert by_hub.hub_id == p.hub_ids[-1]
    assert load_preset(p, requested=p.hub_ids[-1]) is by_hub
    if p.hub_ids[-1] != p.hub_ids[0]:
        assert by_hub is not plain


def test_a_second_gguf_memory_question_walks_no_recipe_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from whichgpu.answers import estimates
    from whichgpu.answers import requests as r
    from whichgpu.estimate.memory import weights

    walked: list[str] = []
    real = weights._recipe_bytes
    monkeypatch.setattr(weights, "_recipe_bytes",
                        lambda model, ftype, *a: walked.append(ftype) or real(model, ftype, *a))
    ask = lambda b: estimates.memory(r.Memory(model="llama-3.1-70b", quant="q4_k_m",  # noqa: E731
                                              context="8k", batch=b)).to_json()
    first = ask(401)
    walked.clear()
    second = ask(402)
    assert walked == []  # the recipes of the first question are the second's
    assert first["total_bytes"] < second["total_bytes"]  # a different question, answered
