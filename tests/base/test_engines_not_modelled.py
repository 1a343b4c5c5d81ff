"""An engine or format people name that whichgpu does not model is refused with the reason,
never answered with another engine's numbers (issue 28, item 4)."""

from __future__ import annotations

import pytest

from whichgpu.engines import not_modelled


@pytest.mark.parametrize("engine, needle", [
    ("exllamav3", "EXL3"),
    ("tgi", "max-batch-prefill-tokens"),
    ("text-generation-inference", "max-batch-prefill-tokens"),
    ("lmdeploy", "TurboMind"),
])
def test_cli_refuses_with_the_reason(cli, engine: str, needle: str) -> None:
    r = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", engine)
    assert r.code == 2
    assert "is not modelled" in r.err and needle in r.err
    assert "another engine's numbers" in r.err


def test_an_equivalent_is_named_where_one_is_honest(cli) -> None:
    r = cli("memory", "llama-3.1-8b", "--engine", "ollama")
    assert r.code == 2
    assert "--engine llamacpp" in r.err and "--engine-version ollama" in r.err


def test_exl3_is_not_answered_as_exl2(cli) -> None:
    r = cli("memory", "llama-3.1-70b", "--quant", "exl3-4.0bpw")
    assert r.code == 2
    assert "EXL3" in r.err and "not modelled" in r.err
    assert "did you mean" not in r.err


def test_rest_422_and_page_without_flags(web) -> None:
    r = web.get("/api/v1/memory", params={"model": "llama-3.1-8b", "engine": "ktransformers"})
    assert r.status_code == 422
    assert "not modelled" in r.json()["detail"]
    page = web.get("/memory", params={"model": "llama-3.1-8b", "engine": "ktransformers"})
    assert "not modelled" in page.text
    assert "--engine" not in page.text and "--n-cpu-moe" not in page.text
    fr = web.get("/memory", params={"model": "llama-3.1-8b", "engine": "tgi", "lang": "fr"})
    assert "n’est pas modélisé" in fr.text


def test_each_entry_has_a_source_and_aliases_resolve() -> None:
    for name in ("exllamav3", "exl3", "tgi", "turbomind", "ktransformers", "ollama"):
        entry = not_modelled(name)
        assert entry is not None and entry.source and entry.why
    assert not_modelled("vllm") is None
