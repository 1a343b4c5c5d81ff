"""Dated re-releases, base models and FP8 copies of a preset's repository resolve offline with
that preset's architecture and their own context and checkpoint format; an unknown Hub id's
error names the closest presets by Hub id. Figures are typed from the model cards."""

from __future__ import annotations

import pytest

from whichgpu.errors import InputError
from whichgpu.models import resolve_model
from whichgpu.models.preset_index import closest_by_hub_id, find_preset, variants


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


# (hub id, preset, published total, its context, its checkpoint format)
@pytest.mark.parametrize(("hub_id", "alias", "total", "context", "quant"), [
    # model card: "Number of Parameters: 4.0B", "Context Length: 262,144 natively"
    ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-4b", 4.0e9, 262_144, None),
    ("Qwen/Qwen3-4B-Instruct-2507-FP8", "qwen3-4b", 4.0e9, 262_144, "fp8"),
    # model card: 30.5B total, context 262,144 natively
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", 30.5e9, 262_144, None),
    # model card: "1T" total, 256K; the repository's count as listed: 1026.5B
    ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2", 1026.5e9, 262_144, "fp8"),
    # Magistral Small 1.0 / 1.1: text only, the Devstral Small text model (23,572,403,200)
    ("mistralai/Magistral-Small-2506", "devstral-small", 23_572_403_200, 131_072, None),
    ("mistralai/Magistral-Small-2507", "devstral-small", 23_572_403_200, 131_072, None),
    ("mistralai/Devstral-Small-2505", "devstral-small", 23_572_403_200, 131_072, None),
    # Llama 4 model card: Scout 109B total, Maverick 400B total
    ("meta-llama/Llama-4-Scout-17B-16E", "llama-4-scout", 109e9, None, None),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick", 400e9, None,
     "fp8"),
    # model card: 480B total, 35B active
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder-480b-a35b", 480e9, None, "fp8"),
    # GLM-4.5-Air: 106B total
    ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air", 106e9, None, "fp8"),
])
def test_a_variant_resolves_offline_with_its_presets_architecture(hub_id, alias, total,
                                                                  context, quant):
    spec = resolve_model(hub_id)
    assert spec.id == alias and spec.hub_id == hub_id
    assert spec.params_total == pytest.approx(total, rel=0.01)
    if context is not None:
        assert spec.max_context == context
    assert spec.quantization == quant
    assert any(n.startswith(f"{hub_id} is read with preset {alias}'s config") for n in spec.notes)


def test_a_dated_release_keeps_its_own_longer_context():
    from whichgpu.answers.inputs.workload import build_workload

    with pytest.raises(InputError, match="trained maximum of 40,960"):
        build_workload("qwen3-4b", context="200000")
    w = build_workload("Qwen/Qwen3-4B-Instruct-2507", context="200000")
    assert w.model.max_context == 262_144


def test_an_fp8_copy_is_sized_at_one_byte_per_linear_weight(cli):
    """FP8 linears, the token embedding and the LM head kept 16-bit (as in Qwen's FP8
    repositories): one byte less per linear weight than the bf16 repository."""
    bf16 = cli("memory", "Qwen/Qwen3-8B", "--engine", "vllm", "--json").json()
    fp8 = cli("memory", "Qwen/Qwen3-8B-FP8", "--engine", "vllm", "--json").json()

    def weights(d):
        return next(t for t in d["terms"] if t["name"] == "weights")["bytes"]

    p = resolve_model("qwen3-8b").params
    linear = p.total - p.embedding - p.lm_head - p.norms
    assert weights(bf16) - weights(fp8) == pytest.approx(linear, rel=0.02)


def test_only_listed_fp8_copies_resolve_and_every_variant_names_a_preset():
    ids = {v.hub_id for v in variants()}
    assert "Qwen/Qwen3-8B-FP8" in ids and "zai-org/GLM-4.6-FP8" in ids
    assert "meta-llama/Llama-2-7b-hf-FP8" not in ids  # Meta never published one
    assert find_preset("meta-llama/Llama-2-7b-hf-FP8") is None
    for v in variants():
        assert find_preset(v.hub_id).alias == v.preset and v.source


def test_a_variant_does_not_shadow_a_preset_of_its_own():
    # Magistral Small 1.2 (2509) has a vision encoder: its own preset, not Devstral's
    assert resolve_model("mistralai/Magistral-Small-2509").id == "magistral-small"


@pytest.mark.parametrize(("asked", "first"), [
    ("Qwen/Qwen3-4B-Instruct-2512", "Qwen/Qwen3-4B-Instruct-2507 (qwen3-4b)"),
    ("moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2-Instruct (kimi-k2)"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct-FP8",
     "meta-llama/Llama-4-Scout-17B-16E-Instruct (llama-4-scout)"),
])
def test_the_closest_presets_by_hub_id(asked, first):
    assert closest_by_hub_id(asked)[0] == first


def test_an_unknown_hub_id_offline_names_the_closest_preset(cli):
    r = cli("model", "Qwen/Qwen3-4B-Instruct-2512")
    assert r.code == 2 and r.out == ""
    assert "closest presets by Hub id (offline): Qwen/Qwen3-4B-Instruct-2507 (qwen3-4b)" in r.err
    r = cli("model", "acme/nothing-like-it")
    assert r.code == 2 and "closest presets" not in r.err
