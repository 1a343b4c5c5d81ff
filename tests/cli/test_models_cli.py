"""'whichgpu model' and 'whichgpu models' as a user runs them."""

from __future__ import annotations

import pytest

REQUIRED = {"params_total", "params_active", "num_layers", "hidden_size", "num_kv_heads",
            "head_dim"}


def test_model_json_has_the_stable_keys_and_dense_active_equals_total(cli):
    r = cli("model", "llama-3.1-70b", "--json")
    assert r.code == 0
    data = r.json()
    assert REQUIRED <= set(data)
    assert data["params_total"] == data["params_active"] == 70_553_706_496
    assert (data["num_layers"], data["hidden_size"], data["num_kv_heads"], data["head_dim"]) \
        == (80, 8192, 8, 128)
    assert data["source"] == "preset:llama-3.1-70b" and data["approximate"] is False
    assert data["attention"] == {"full": 80, "sliding": 0, "chunked": 0, "linear": 0, "none": 0,
                                 "sliding_windows": [], "chunk_sizes": [], "no_rope_layers": 0,
                                 "state_bytes_per_sequence": 0}
    assert {g["name"] for g in data["linears"]} >= {"q_proj", "k_proj", "v_proj", "o_proj",
                                                    "gate_proj", "up_proj", "down_proj"}


def test_moe_model_json_shows_experts_and_active_parameters(cli):
    data = cli("model", "Qwen/Qwen3-30B-A3B", "--json").json()
    assert data["params_active"] < data["params_total"]
    assert data["moe"]["num_experts"] == 128 and data["moe"]["experts_per_token"] == 8
    mla = cli("model", "deepseek-v3", "--json").json()["mla"]
    assert mla["cache_elements_per_token"] == 576


def test_bare_size_is_marked_as_an_approximation_everywhere(cli):
    r = cli("model", "70B", "--json")
    assert r.code == 0 and r.json()["approximate"] is True
    assert r.json()["assumptions"] and "approximation" in r.err
    r = cli("model", "--params", "70e9")
    assert r.code == 0 and "approximation" in r.out
    assert cli("model", "--params", "70e9", "--json").json()["params_total"] == 70_000_000_000


def test_diffusion_model_json_lists_components(cli):
    data = cli("model", "sdxl", "--json").json()
    assert data["family"] == "diffusion"
    names = {c["name"] for c in data["diffusion"]["components"]}
    assert names == {"text_encoder", "text_encoder_2", "unet", "vae"}
    assert data["diffusion"]["image_tokens_at_default"] == 128 * 128


def test_model_table_for_people(cli):
    r = cli("model", "gemma-2-9b")
    assert r.code == 0
    assert "21 sliding (window 4096)" in r.out and "tied embeddings" in r.out
    r = cli("model", "flux.1-dev")
    assert r.code == 0 and "FLUX.1 [dev]" in r.out and "guidance-distilled" in r.out


def test_models_lists_presets_with_official_counts(cli):
    data = cli("models", "--json").json()["models"]
    assert len(data) >= 50
    row = next(m for m in data if m["alias"] == "llama-3.1-8b")
    assert row["params_total"] == 8_030_261_248 and "meta-llama/Llama-3.1-8B" in row["hub_ids"]
    assert row["source"] and abs(row["official_error"]) < 0.005
    diff = cli("models", "--family", "diffusion", "--json").json()["models"]
    from whichgpu.models.preset_index import presets

    pipelines = [p for p in presets() if p.family == "diffusion"]
    assert {m["family"] for m in diff} == {"diffusion"} and len(diff) == len(pipelines) >= 13
    r = cli("models")
    assert r.code == 0 and "qwen3-235b-a22b" in r.out


def test_bad_input_exits_2_without_a_traceback(cli):
    for args in (("model", "llama-3.1-7b"), ("model",), ("model", "--params", "lots"),
                 ("model", "./missing/config.json"), ("models", "--family", "audio")):
        r = cli(*args)
        assert r.code == 2, args
        assert "Traceback" not in r.err and "error:" in r.err, args
    r = cli("model", "llama-3.1-7b")
    assert "did you mean" in r.err


# The presets issue 14 added: each resolves offline by every Hub id, as a user types it.
NEW_2026 = ("qwen3.5-397b-a17b", "qwen3.5-122b-a10b", "qwen3.5-35b-a3b", "qwen3.5-27b",
            "qwen3.5-9b", "qwen3.5-4b", "qwen3.5-2b", "qwen3.5-0.8b", "qwen3-4b", "qwen3-14b",
            "qwen3-coder-480b-a35b", "qwen3-next-80b-a3b", "glm-4.5", "glm-4.5-air", "glm-4.6",
            "glm-4.7", "llama-4-scout", "llama-4-maverick", "mistral-small-3.2",
            "magistral-small", "devstral-small", "gemma-3-1b", "gemma-3-4b", "gemma-3-12b",
            "kimi-k2", "kimi-k2.5", "deepseek-v3.1", "deepseek-v3.2", "minimax-m2",
            "nemotron-3-nano-30b-a3b", "nemotron-nano-9b-v2", "granite-4.0-h-small",
            "granite-4.0-h-tiny", "granite-4.0-h-micro", "ernie-4.5-21b-a3b", "hunyuan-a13b")


def _hub_ids():
    from whichgpu.models.preset_index import find_preset

    return [(alias, h) for alias in NEW_2026 for h in find_preset(alias).hub_ids]


@pytest.mark.parametrize("alias,hub_id", _hub_ids(), ids=lambda v: v)
def test_new_presets_resolve_offline_by_hub_id_with_their_counts(cli, alias, hub_id):
    from whichgpu.models.preset_index import find_preset, load_preset

    r = cli("model", hub_id, "--json")
    assert r.code == 0, r.err
    data = r.json()
    spec = load_preset(find_preset(alias))
    assert data["id"] == alias and data["hub_id"] == hub_id
    assert (data["params_total"], data["params_active"]) == (spec.params_total,
                                                             spec.params_active)
    assert data["mtp_params"] == spec.mtp_params
    assert data["approximate"] is False and data["source"] == f"preset:{alias}"


def test_model_text_output_names_the_new_layer_kinds(cli):
    r = cli("model", "llama-4-scout")
    assert r.code == 0 and "12 full, 36 chunked (chunk 8192)" in r.out
    r = cli("model", "nemotron-3-nano-30b-a3b")
    assert r.code == 0 and "6 full, 23 linear/SSM, 23 MLP/MoE only" in r.out
