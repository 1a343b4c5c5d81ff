"""Every shipped preset: it resolves offline by alias and by each Hub id, and the parameter
count computed from its config matches the publisher's count (sources in presets/index.toml).
"""

from __future__ import annotations

import json
import math
import tomllib
from importlib import resources

import pytest

from whichgpu.models import resolve_model
from whichgpu.models.preset_index import find_preset, load_preset, official_compared, presets

PRESETS = presets()
ROOT = resources.files("whichgpu.models").joinpath("presets")

# Presets whose only published count is the size in the model's name. The count from the
# config is shown next to it by 'whichgpu models'; these are the ones not checkable to 0.5 %.
NOMINAL_ONLY = {"phi-3-medium", "falcon-40b", "mpt-7b", "kimi-k2.5",
                "wan-2.2-i2v-14b"}


def _tolerance(official: float, precision: str) -> float:
    """Allowed absolute difference: 0.5 %, or half a unit of the last published digit."""
    rel = 0.005 * official
    if precision in ("3sf", "2sf", "1sf"):
        digits = int(precision[0])
        unit = 10 ** (math.floor(math.log10(official)) - digits + 1)
        return max(rel, unit / 2)
    if precision == "nominal":
        return 0.05 * official
    return rel


def test_the_issue_list_of_presets_is_shipped():
    aliases = {p.alias for p in PRESETS}
    required = {
        "llama-2-7b", "llama-2-13b", "llama-2-70b", "codellama-34b", "llama-3-8b", "llama-3-70b",
        "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
        "llama-3.3-70b", "mistral-7b-v0.1", "mistral-7b-v0.3", "mixtral-8x7b", "mixtral-8x22b",
        "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b",
        "qwen2.5-72b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b",
        "gemma-2-9b", "gemma-2-27b", "gemma-3-27b", "phi-3-mini", "phi-3-medium", "phi-4",
        "deepseek-v3", "deepseek-r1-distill-llama-70b", "gpt-oss-20b", "gpt-oss-120b", "gpt2",
        "gpt2-medium", "gpt2-large", "gpt2-xl", "falcon-40b", "mpt-7b", "mpt-30b",
        "sd-1.5", "sdxl", "sd-3.5-large", "flux.1-dev", "flux.1-schnell", "qwen-image",
        "hidream-i1", "wan-2.2-5b", "wan-2.2-14b"}
    assert required <= aliases


def test_issue_14s_presets_are_shipped():
    """2025-26 models people ask about (issue 14); what could not be shipped is in the README."""
    aliases = {p.alias for p in PRESETS}
    required = {
        "qwen3.5-397b-a17b", "qwen3.5-122b-a10b", "qwen3.5-35b-a3b", "qwen3.5-27b", "qwen3.5-9b",
        "qwen3.5-4b", "qwen3.5-2b", "qwen3.5-0.8b", "qwen3-4b", "qwen3-14b",
        "qwen3-coder-480b-a35b", "qwen3-next-80b-a3b", "glm-4.5", "glm-4.5-air", "glm-4.6",
        "glm-4.7", "llama-4-scout", "llama-4-maverick", "mistral-small-3.2", "magistral-small",
        "devstral-small", "gemma-3-4b", "gemma-3-12b", "kimi-k2", "kimi-k2.5", "deepseek-v3.1",
        "deepseek-v3.2", "minimax-m2", "nemotron-3-nano-30b-a3b", "nemotron-nano-9b-v2",
        "granite-4.0-h-small", "granite-4.0-h-tiny", "granite-4.0-h-micro", "ernie-4.5-21b-a3b",
        "hunyuan-a13b",
        "flux.1-kontext-dev", "qwen-image-edit", "wan-2.2-i2v-14b"}
    assert required <= aliases
    assert len(required) >= 30


def test_index_and_preset_folders_agree():
    folders = {f.name for f in ROOT.iterdir() if f.is_dir() and not f.name.startswith("_")}
    assert folders == {p.alias for p in PRESETS}
    data = tomllib.loads(ROOT.joinpath("index.toml").read_text("utf-8"))
    sources = {k for k, v in data["sources"].items() if not isinstance(v, dict)}
    sources |= {k for v in data["sources"].values() if isinstance(v, dict) for k in v}
    for p in PRESETS:
        key = p.official_source.split()[0].rstrip(";")
        assert key in sources or key.startswith("http"), (p.alias, key)
        assert p.config_source.split()[0] in sources, p.alias
        assert p.hub_ids, p.alias


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.alias)
def test_preset_count_matches_the_official_count(p):
    spec = load_preset(p)
    computed = official_compared(spec, p.official_checkpoint)
    tol = _tolerance(p.official_params, p.official_precision)
    assert abs(computed - p.official_params) <= tol, (
        f"{p.alias}: computed {computed:,} vs official {p.official_params:,.0f} "
        f"({p.official_source})")
    if p.official_precision == "exact":
        assert abs(computed / p.official_params - 1) < 0.005
    if p.official_precision == "nominal":
        assert p.alias in NOMINAL_ONLY


@pytest.mark.parametrize("p", [p for p in PRESETS if p.official_active], ids=lambda p: p.alias)
def test_moe_active_count_matches_the_official_active_count(p):
    spec = load_preset(p)
    active = spec.params_active
    if p.official_active_excludes_embedding:
        active -= spec.params.embedding
    precision = p.official_active_precision or "exact"
    if precision.endswith("-truncated"):  # "3.3B" for 3.35B: the figure is cut, not rounded
        digits = int(precision[0])
        unit = 10 ** (math.floor(math.log10(p.official_active)) - digits + 1)
        assert p.official_active <= active < p.official_active + unit, (p.alias, active)
    else:
        tol = _tolerance(p.official_active, precision)
        assert abs(active - p.official_active) <= tol, (p.alias, active)
    assert spec.params_active < spec.params_total


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: p.alias)
def test_alias_and_every_hub_id_resolve_offline_to_the_same_model(p):
    by_alias = resolve_model(p.alias, offline=True)
    assert by_alias.source == f"preset:{p.alias}"
    for hub_id in p.hub_ids:
        spec = resolve_model(hub_id, offline=True)
        assert spec.params_total == by_alias.params_total
        assert spec.hub_id == hub_id


def test_dense_presets_have_active_equal_to_total_less_any_vision_tower():
    moe = {"mixtral-8x7b", "mixtral-8x22b", "mixtral-8x22b-instruct", "wan-2.2-14b",
           "wan-2.2-i2v-14b"}
    for p in PRESETS:
        spec = load_preset(p)
        if spec.moe is not None or p.alias in moe:
            assert spec.params_active < spec.params_total - spec.vision_params, p.alias
        else:  # the vision tower runs once per image, not per token
            assert spec.params_active == spec.params_total - spec.vision_params, p.alias


@pytest.mark.parametrize("p", [p for p in PRESETS if p.official_checkpoint],
                         ids=lambda p: p.alias)
def test_a_checkpoint_total_is_matched_only_with_what_the_checkpoint_adds(p):
    """The extras a checkpoint total holds are real: without them the count is lower."""
    spec = load_preset(p)
    bare = official_compared(spec)
    full = official_compared(spec, p.official_checkpoint)
    assert full > bare
    if "mtp" in p.official_checkpoint:
        assert spec.mtp_params > 0 and "multi-token-prediction" in " ".join(spec.notes)
    if "fp8-scales" in p.official_checkpoint:
        assert spec.quantization == "fp8"


def test_short_names_are_forgiving():
    assert find_preset("Llama3.1-70B").alias == "llama-3.1-70b"
    assert find_preset("llama-3.1-70b-instruct").alias == "llama-3.1-70b"
    assert find_preset("META-LLAMA/llama-3.1-70b-INSTRUCT").alias == "llama-3.1-70b"
    assert find_preset("gemma-2-9b-it").alias == "gemma-2-9b"
    assert find_preset("flux-dev").alias == "flux.1-dev"
    assert find_preset("qwen2.5-7b").alias == "qwen2.5-7b"
    assert find_preset("org/unknown-model") is None


def test_preset_configs_are_valid_json_with_a_model_type():
    for p in PRESETS:
        if p.family == "decoder":
            data = json.loads(ROOT.joinpath(p.alias, "config.json").read_text("utf-8"))
            assert "model_type" in data, p.alias


def test_mixtral_8x22b_instruct_resolves_offline_with_its_own_vocabulary():
    base = resolve_model("mistralai/Mixtral-8x22B-v0.1", offline=True)
    inst = resolve_model("mistralai/Mixtral-8x22B-Instruct-v0.1", offline=True)
    assert (base.vocab_size, inst.vocab_size) == (32000, 32768)
    assert inst.params_total - base.params_total == 2 * 768 * 6144  # embedding + LM head


def test_qwen3_coder_resolves_offline_with_the_safetensors_count():
    spec = resolve_model("Qwen/Qwen3-Coder-30B-A3B-Instruct", offline=True)
    assert spec.params_total * 2 == 61_064_245_248  # model.safetensors.index.json total_size
    assert spec.max_context == 262_144
