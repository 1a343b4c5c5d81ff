"""config.json parsing: every supported model_type, the architecture details other tools get
wrong, and malformed configs (an error naming the file and the field, never a traceback).
"""

from __future__ import annotations

import copy
import json

import pytest

from paths import DATA
from whichgpu.errors import DataError, InputError
from whichgpu.models.config_parse import SUPPORTED_MODEL_TYPES, parse_config, quantization_of
from whichgpu.models.preset_index import find_preset, official_compared

CONFIGS = DATA / "models" / "configs"


def preset_config(alias: str) -> dict:
    return copy.deepcopy(find_preset(alias).read_json("config.json"))


def fixture(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text("utf-8"))


def text_of(alias: str) -> dict:
    """A wrapper preset's text model alone, as a config of its own."""
    cfg = preset_config(alias)
    return {"tie_word_embeddings": cfg.get("tie_word_embeddings", False), **cfg["text_config"]}


# One real config per supported model_type, with a published exact (or stated) count.
EXAMPLES = {
    "llama": (lambda: preset_config("llama-3.1-8b"), 8_030_261_248),  # keras-hub llama3
    "mistral": (lambda: preset_config("mistral-7b-v0.1"), 7_241_732_096),  # keras-hub
    "mixtral": (lambda: preset_config("mixtral-8x7b"), 46_702_792_704),  # keras-hub
    "qwen2": (lambda: preset_config("qwen2.5-0.5b"), 494_032_768),  # keras-hub
    "qwen2_moe": (lambda: fixture("qwen1.5-moe-a2.7b.json"), 14_315_784_192),  # keras-hub
    "qwen3": (lambda: preset_config("qwen3-8b"), 8_190_735_360),  # keras-hub
    "qwen3_moe": (lambda: preset_config("qwen3-30b-a3b"), 30_532_122_624),  # keras-hub
    "gemma": (lambda: fixture("gemma-2b.json"), 2_506_172_416),  # keras-hub
    "gemma2": (lambda: preset_config("gemma-2-9b"), 9_241_705_984),  # keras-hub
    "gemma3_text": (lambda: fixture("gemma-3-1b-it.json"), 999_885_952),  # keras-hub
    "gemma3": (lambda: preset_config("gemma-3-27b"), 27_432_062_576),  # keras-hub (vocab pad)
    "phi3": (lambda: preset_config("phi-3-mini"), 3_821_079_552),  # keras-hub
    "deepseek_v2": (lambda: fixture("deepseek-v2-lite.json"), 15.7e9),  # model card
    "deepseek_v3": (lambda: preset_config("deepseek-v3"), 671e9),  # paper
    "gpt2": (lambda: preset_config("gpt2-xl"), 1_557_611_200),  # keras-hub
    "gpt_neox": (lambda: fixture("pythia-70m.json"), 70_426_624),  # Pythia README
    "falcon": (lambda: fixture("falcon-rw-1b.json"), 1_311_625_216),  # keras-hub
    "gpt_oss": (lambda: preset_config("gpt-oss-20b"), 20_914_757_184),  # keras-hub
    "mpt": (lambda: preset_config("mpt-30b"), 29.95e9),  # model card
    "qwen3_next": (lambda: fixture("qwen3-next-80b-a3b-instruct.json"), 80e9),  # model card
    # 2025-26 architectures (issue 14); counts from presets/index.toml's sources
    "qwen3_5": (lambda: preset_config("qwen3.5-0.8b"), 852_985_920),  # Hub: saved without MTP
    "qwen3_5_text": (lambda: text_of("qwen3.5-9b"), 8_953_803_264),  # Hub: 9B text-only
    "qwen3_5_moe": (lambda: preset_config("qwen3.5-397b-a17b"), 397e9),  # card: 397B
    "qwen3_5_moe_text": (lambda: text_of("qwen3.5-122b-a10b"), 122e9),  # card 122B (0.4 % ViT)
    "glm4_moe": (lambda: preset_config("glm-4.6"), 356_785_898_816, ("mtp",)),  # Hub
    "llama4": (lambda: preset_config("llama-4-scout"), 108_641_793_536),  # Hub
    "llama4_text": (lambda: text_of("llama-4-maverick"), 400e9),  # card: 400B (0.2 % ViT)
    "mistral3": (lambda: preset_config("mistral-small-3.2"), 24e9),  # card: 24B
    "minimax_m2": (lambda: preset_config("minimax-m2"), 228_703_644_928, ("fp8-scales",)),
    "ernie4_5_moe": (lambda: preset_config("ernie-4.5-21b-a3b"), 21_825_437_888),  # Hub
    "kimi_k2": (lambda: preset_config("kimi-k2"), 1_026_470_731_056, ("fp8-scales",)),  # Hub
    "kimi_k25": (lambda: preset_config("kimi-k2.5"), 1e12),  # card: 1T (nominal: 2.7 % over)
    "deepseek_v32": (lambda: preset_config("deepseek-v3.2"), 685_396_921_376,
                     ("mtp", "mtp-copies", "fp8-scales")),  # Hub
    "granitemoehybrid": (lambda: preset_config("granite-4.0-h-tiny"), 6_939_037_248),  # Hub
    "hunyuan_v1_moe": (lambda: preset_config("hunyuan-a13b"), 80e9),  # card: 80B (2 figures)
    "nemotron_h": (lambda: preset_config("nemotron-nano-9b-v2"), 8_888_227_328),  # Hub
    "gemma3n": (lambda: preset_config("gemma-3n-e4b"), 7_849_978_192),  # Hub (bf16 copy)
    "gemma3n_text": (lambda: text_of("gemma-3n-e2b"), 4.46e9),  # executorch export: 4.46b
}


def test_every_supported_model_type_has_an_example():
    assert set(SUPPORTED_MODEL_TYPES) == set(EXAMPLES)


# figures only published to their nominal size (the model's name); checked to 5 %
NOMINAL = {"kimi_k25", "hunyuan_v1_moe"}


@pytest.mark.parametrize("model_type", sorted(EXAMPLES))
def test_each_model_type_counts_its_published_parameters(model_type):
    make, official, *extras = EXAMPLES[model_type]
    cfg = make()
    spec = parse_config(cfg, origin=f"{model_type}.json")
    counted = official_compared(spec, extras[0] if extras else ())
    tolerance = 0.05 if model_type in NOMINAL else 0.005
    assert abs(counted / official - 1) < tolerance, counted
    assert spec.num_layers == len(spec.layers) > 0
    assert spec.hidden_size and spec.num_kv_heads and spec.head_dim and spec.vocab_size
    # the linears are complete: with embeddings, head, norms and routers they make the total
    linear_weights = sum(g.params + g.bias_params for g in spec.linears)
    p = spec.params
    rest = p.embedding + p.lm_head + p.norms + p.router + p.other
    assert linear_weights <= spec.params_total
    assert linear_weights + rest >= 0.9999 * spec.params_total


def test_gqa_is_not_ignored_llama_3_8b_has_8_kv_heads_of_128():
    spec = parse_config(preset_config("llama-3.1-8b"), origin="c")
    assert (spec.num_attention_heads, spec.num_kv_heads, spec.head_dim) == (32, 8, 128)
    k = next(g for g in spec.linears if g.name == "k_proj")
    assert (k.in_features, k.out_features, k.count) == (4096, 1024, 32)
    assert all(layer.kv_heads == 8 for layer in spec.layers)


def test_explicit_head_dim_wins_over_hidden_over_heads():
    spec = parse_config(preset_config("gemma-2-27b"), origin="c")  # 4608 / 32 would be 144
    assert spec.head_dim == 128
    q = next(g for g in spec.linears if g.name == "q_proj")
    assert q.out_features == 32 * 128
    spec = parse_config(preset_config("qwen3-8b"), origin="c")
    assert spec.head_dim == 128 and spec.params.norms > 36 * 2 * 4096  # q_norm and k_norm


def test_tied_embeddings_have_no_lm_head():
    tied = parse_config(preset_config("llama-3.2-1b"), origin="c")
    assert tied.tie_word_embeddings and tied.params.lm_head == 0
    assert tied.params_total == 1_235_814_400  # model card: 1.23B
    untied = preset_config("llama-3.2-1b")
    untied["tie_word_embeddings"] = False
    assert parse_config(untied, origin="c").params.lm_head == 128256 * 2048


def test_moe_active_parameters_count_top_k_experts_only():
    spec = parse_config(preset_config("mixtral-8x7b"), origin="c")
    assert spec.moe.num_experts == 8 and spec.moe.experts_per_token == 2
    assert abs(spec.params_active - 12.9e9) < 0.05e9  # Mistral: 12.9B active
    experts = [g for g in spec.linears if g.expert]
    assert {g.name for g in experts} == {"w1", "w2", "w3"}
    assert all(g.count == 32 * 8 for g in experts)
    assert spec.params.router == 32 * 4096 * 8
    assert all(layer.moe for layer in spec.layers)


def test_deepseek_v3_mla_and_dense_first_layers():
    spec = parse_config(preset_config("deepseek-v3"), origin="c")
    assert spec.mla.kv_lora_rank == 512 and spec.mla.cache_elements_per_token == 576
    assert spec.moe.dense_layers == 3 and spec.moe.moe_layers == 58
    assert spec.moe.num_shared_experts == 1
    names = {g.name for g in spec.linears}
    assert {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"} <= names
    kvb = next(g for g in spec.linears if g.name == "kv_b_proj")
    assert (kvb.in_features, kvb.out_features) == (512, 128 * (128 + 128))
    assert spec.quantization == "fp8"
    assert [layer.moe for layer in spec.layers[:4]] == [False, False, False, True]
    assert any("multi-token-prediction" in n for n in spec.notes)


def test_sliding_windows_per_layer():
    g2 = parse_config(preset_config("gemma-2-9b"), origin="c")
    assert [la.attention for la in g2.layers[:4]] == ["sliding", "full", "sliding", "full"]
    assert g2.layers[0].window == 4096
    g3 = parse_config(preset_config("gemma-3-27b"), origin="c")
    kinds = [la.attention for la in g3.layers]
    assert kinds.count("full") == 10 and kinds[5] == "full" and kinds[0] == "sliding"
    assert g3.layers[0].window == 1024
    oss = parse_config(preset_config("gpt-oss-20b"), origin="c")
    assert [la.window for la in oss.layers[:2]] == [128, None]
    mistral = parse_config(preset_config("mistral-7b-v0.1"), origin="c")
    assert all(la.attention == "sliding" and la.window == 4096 for la in mistral.layers)
    v03 = parse_config(preset_config("mistral-7b-v0.3"), origin="c")
    assert all(la.attention == "full" for la in v03.layers)
    qwen = parse_config(preset_config("qwen2.5-7b"), origin="c")  # use_sliding_window false
    assert all(la.attention == "full" for la in qwen.layers)


def test_peft_module_names_per_family():
    gpt2 = parse_config(preset_config("gpt2"), origin="c")
    assert {g.name for g in gpt2.linears} == {"c_attn", "c_proj", "c_fc"}
    c_attn = next(g for g in gpt2.linears if g.name == "c_attn")
    assert (c_attn.in_features, c_attn.out_features, c_attn.bias) == (768, 2304, True)
    falcon = parse_config(preset_config("falcon-40b"), origin="c")
    qkv = next(g for g in falcon.linears if g.name == "query_key_value")
    assert qkv.out_features == (128 + 2 * 8) * 64  # new decoder architecture: grouped KV
    assert {g.name for g in falcon.linears} == {
        "query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"}
    neox = parse_config(fixture("pythia-70m.json"), origin="c")
    assert {g.name for g in neox.linears} == {
        "query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"}
    phi = parse_config(preset_config("phi-3-mini"), origin="c")
    assert {g.name for g in phi.linears} == {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"}
    mpt = parse_config(preset_config("mpt-7b"), origin="c")
    assert {g.name for g in mpt.linears} == {"Wqkv", "out_proj", "up_proj", "down_proj"}


def test_native_dtype_and_quantization():
    assert parse_config(preset_config("llama-2-7b"), origin="c").native_dtype == "fp16"
    assert parse_config(preset_config("llama-3.1-8b"), origin="c").native_dtype == "bf16"
    oss = parse_config(preset_config("gpt-oss-120b"), origin="c")
    assert oss.quantization == "mxfp4" and oss.native_dtype == "bf16"
    assert parse_config(preset_config("gpt2"), origin="c").native_dtype == "fp32"
    assert quantization_of({"quant_method": "gptq", "bits": 4}) == "gptq"
    assert quantization_of({"quant_method": "awq", "bits": 4}) == "awq"
    assert quantization_of({"quant_method": "bitsandbytes", "load_in_4bit": True,
                            "bnb_4bit_quant_type": "nf4"}) == "nf4"
    assert quantization_of(None) is None


# ---------------------------------------------------------------------------- malformed input

def test_missing_field_names_file_and_field():
    cfg = preset_config("llama-3.1-8b")
    del cfg["hidden_size"]
    with pytest.raises(DataError) as e:
        parse_config(cfg, origin="my/config.json")
    assert "my/config.json" in str(e.value) and "'hidden_size'" in str(e.value)
    assert "missing" in str(e.value)


@pytest.mark.parametrize("field,value,words", [
    ("num_hidden_layers", "32", "expected an integer"),
    ("num_hidden_layers", 10**12, "not a plausible value"),
    ("num_hidden_layers", 0, "at least 1"),
    ("num_hidden_layers", -4, "at least 1"),
    ("num_hidden_layers", 32.5, "expected an integer"),
    ("num_attention_heads", True, "expected an integer"),
    ("vocab_size", [128256], "expected an integer"),
    ("tie_word_embeddings", "no", "expected true or false"),
    ("num_key_value_heads", 7, "cannot be shared"),
])
def test_wrong_types_and_absurd_values_are_data_errors(field, value, words):
    cfg = preset_config("llama-3.1-8b")
    cfg[field] = value
    with pytest.raises(DataError) as e:
        parse_config(cfg, origin="bad.json")
    assert "bad.json" in str(e.value) and field in str(e.value) and words in str(e.value)


def test_nested_field_errors_have_a_dotted_name():
    cfg = preset_config("gemma-3-27b")
    cfg["text_config"]["num_hidden_layers"] = "sixty-two"
    with pytest.raises(DataError, match=r"text_config\.num_hidden_layers"):
        parse_config(cfg, origin="g.json")


def test_layer_types_of_the_wrong_length_is_an_error():
    cfg = preset_config("gpt-oss-20b")
    cfg["layer_types"] = cfg["layer_types"][:5]
    with pytest.raises(DataError, match="layer_types"):
        parse_config(cfg, origin="o.json")


def test_unsupported_model_type_lists_the_supported_ones():
    with pytest.raises(InputError) as e:
        parse_config({"model_type": "mamba2", "hidden_size": 10}, origin="m.json")
    msg = str(e.value)
    assert "'mamba2'" in msg and "llama" in msg and "deepseek_v3" in msg and "m.json" in msg


def test_not_an_object_and_missing_model_type():
    with pytest.raises(DataError, match="JSON object"):
        parse_config([1, 2], origin="list.json")
    with pytest.raises(DataError, match="'model_type'"):
        parse_config({"hidden_size": 4096}, origin="x.json")
