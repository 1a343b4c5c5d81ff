"""The 2025-26 architectures (issue 14): layer kinds, KV cache and recurrent state per sequence,
written out by hand from each shipped config's own fields, and what the parsers refuse.

Parameter counts against the published figures are in test_models_presets.py (every preset)
and test_models_config.py (one config per model_type).
"""

from __future__ import annotations

import copy

import pytest

from whichgpu.errors import DataError, InputError
from whichgpu.estimate.memory.kv import index_key_bytes, kv_cache, kv_read_bytes
from whichgpu.estimate.speed.llm import attention_flops_per_token
from whichgpu.models import resolve_model
from whichgpu.models.config_parse import parse_config
from whichgpu.models.preset_index import find_preset

BF16 = 2


def cfg(alias: str) -> dict:
    return copy.deepcopy(find_preset(alias).read_json("config.json"))


def spec(alias: str):
    return resolve_model(alias, offline=True)


def kinds(m) -> dict[str, int]:
    out: dict[str, int] = {}
    for layer in m.layers:
        out[layer.attention] = out.get(layer.attention, 0) + 1
    return out


def kv_per_token(m, engine: str = "transformers") -> float:
    """Bytes one more token adds, measured on the estimator (difference of two contexts)."""
    return (kv_cache(m, 2048, BF16, engine).bytes_per_sequence
            - kv_cache(m, 1024, BF16, engine).bytes_per_sequence) / 1024


# ---------------------------------------------------------------------------- Qwen3.5

@pytest.mark.parametrize("alias", ["qwen3.5-27b", "qwen3.5-397b-a17b", "qwen3.5-0.8b"])
def test_qwen35_gated_deltanet_state_and_full_attention_kv(alias):
    t = cfg(alias)["text_config"]
    m = spec(alias)
    n_full = t["layer_types"].count("full_attention")
    n_lin = t["layer_types"].count("linear_attention")
    assert kinds(m) == {"full": n_full, "linear": n_lin}
    # full layers: K and V of num_key_value_heads x head_dim per token
    assert kv_per_token(m) == n_full * 2 * t["num_key_value_heads"] * t["head_dim"] * BF16
    # Gated DeltaNet: conv over q, k, v for kernel - 1 positions + one state matrix per v head;
    # the config keeps the recurrent state in float32 (mamba_ssm_dtype)
    assert t["mamba_ssm_dtype"] == "float32"
    conv = (2 * t["linear_num_key_heads"] * t["linear_key_head_dim"]
            + t["linear_num_value_heads"] * t["linear_value_head_dim"])
    ssm = t["linear_num_value_heads"] * t["linear_key_head_dim"] * t["linear_value_head_dim"]
    per_layer = conv * (t["linear_conv_kernel_dim"] - 1) * BF16 + ssm * 4
    for ctx in (4096, 131072):
        held = kv_cache(m, ctx, BF16, "vllm")
        assert held.by_kind["linear-state"] == n_lin * per_layer  # constant in the context
    llama_cpp = kv_cache(m, 4096, BF16, "llamacpp").by_kind["linear-state"]
    assert llama_cpp == n_lin * (conv * (t["linear_conv_kernel_dim"] - 1) + ssm) * 4  # all F32


def test_qwen35_mtp_layer_is_what_the_two_checkpoints_differ_by():
    # Qwen/Qwen3.5-0.8B-Base (with its MTP layer) 873,438,784 and unsloth's copy saved without
    # it 852,985,920 (llmfit-hub): the difference is the MTP module the parser reports apart
    m = spec("qwen3.5-0.8b")
    assert m.mtp_params == 873_438_784 - 852_985_920
    assert m.params_total == 852_985_920


def test_qwen35_moe_active_is_top_k_plus_the_shared_expert_without_the_vision_tower():
    t = cfg("qwen3.5-397b-a17b")["text_config"]
    m = spec("qwen3.5-397b-a17b")
    assert (m.moe.num_experts, m.moe.experts_per_token) == (512, 10)
    assert m.moe.num_shared_experts == 1 and m.moe.moe_layers == t["num_hidden_layers"]
    assert m.vision_params > 0 and m.architecture == "qwen3_5_moe"
    expert = 3 * t["hidden_size"] * t["moe_intermediate_size"]
    inactive = m.params.experts - t["num_hidden_layers"] * 10 * expert
    assert m.params_active == m.params_total - m.vision_params - inactive


# ---------------------------------------------------------------------------- GLM-4.5

def test_glm45_dense_first_layers_shared_expert_and_kv():
    c = cfg("glm-4.5")
    m = spec("glm-4.5")
    first = c["first_k_dense_replace"]
    assert [la.moe for la in m.layers[:first + 1]] == [False] * first + [True]
    assert m.moe.dense_layers == first and m.moe.num_shared_experts == c["n_shared_experts"]
    assert m.params.mlp == first * 3 * c["hidden_size"] * c["intermediate_size"]
    assert kv_per_token(m) == c["num_hidden_layers"] * 2 * c["num_key_value_heads"] * \
        c["head_dim"] * BF16
    # sigmoid router: weight + e_score_correction_bias per MoE layer
    assert m.params.router == (c["num_hidden_layers"] - first) * c["n_routed_experts"] * (
        c["hidden_size"] + 1)
    assert m.mtp_params > 0


# ---------------------------------------------------------------------------- Llama 4

def test_llama4_chunked_layers_hold_one_chunk_and_no_rope_layers_the_whole_context():
    t = cfg("llama-4-scout")["text_config"]
    m = spec("llama-4-scout")
    chunk = t["attention_chunk_size"]
    n = t["num_hidden_layers"]
    full = [i for i, la in enumerate(m.layers) if la.attention == "full"]
    assert full == list(range(3, n, 4))  # the no-RoPE layers: every fourth by default
    assert all(not m.layers[i].rope for i in full)
    assert all(la.window == chunk and la.rope for la in m.layers if la.attention == "chunked")
    per_layer_token = 2 * t["num_key_value_heads"] * t["head_dim"] * BF16
    ctx = 65536
    held = kv_cache(m, ctx, BF16, "transformers")
    assert held.by_kind["full"] == len(full) * ctx * per_layer_token
    assert held.by_kind["chunked"] == (n - len(full)) * chunk * per_layer_token
    # vLLM pages every layer for the whole context, but a decode step reads one chunk
    paged = kv_cache(m, ctx, BF16, "vllm")
    assert paged.by_kind["chunked"] == (n - len(full)) * ctx * per_layer_token
    assert kv_read_bytes(m, ctx, BF16, "vllm") == pytest.approx(
        len(full) * ctx * per_layer_token + (n - len(full)) * chunk * per_layer_token)


def test_llama4_attention_flops_stop_growing_past_the_chunk_on_chunked_layers():
    m = spec("llama-4-maverick")
    full = sum(1 for la in m.layers if la.attention == "full")
    per = 4 * m.num_attention_heads * m.head_dim
    a, b = attention_flops_per_token(m, 65536), attention_flops_per_token(m, 131072)
    assert b - a == pytest.approx(full * per * (131072 - 65536))


def test_llama4_moe_every_second_layer_in_maverick_with_a_shared_expert():
    t = cfg("llama-4-maverick")["text_config"]
    m = spec("llama-4-maverick")
    assert [la.moe for la in m.layers[:4]] == [False, True, False, True]
    assert m.moe.moe_layers == t["num_hidden_layers"] // t["interleave_moe_layer_step"]
    assert m.params.mlp == m.moe.dense_layers * 3 * t["hidden_size"] * t["intermediate_size_mlp"]
    assert m.vision_params == 871_932_416  # the Hub total minus the text model (llmfit-hub)


# ---------------------------------------------------------------------------- Mistral 3, Gemma 3

def test_mistral3_unwraps_its_text_model_and_counts_the_pixtral_tower():
    c = cfg("mistral-small-3.2")
    m = spec("mistral-small-3.2")
    t = c["text_config"]
    text = parse_config({**t, "tie_word_embeddings": False}, origin="text")
    assert text.params_total == 23_572_403_200  # devstral-index: the same text model
    assert m.params_total == text.params_total + m.vision_params
    assert kinds(m) == {"full": t["num_hidden_layers"]}  # sliding_window null
    assert kv_per_token(m) == t["num_hidden_layers"] * 2 * t["num_key_value_heads"] * \
        t["head_dim"] * BF16


@pytest.mark.parametrize("alias", ["gemma-3-4b", "gemma-3-12b"])
def test_gemma3_every_sixth_layer_global_the_others_a_1024_window(alias):
    t = cfg(alias)["text_config"]
    m = spec(alias)
    n = t["num_hidden_layers"]
    assert kinds(m) == {"sliding": n - n // 6, "full": n // 6}
    per_layer_token = 2 * t["num_key_value_heads"] * t["head_dim"] * BF16
    held = kv_cache(m, 32768, BF16, "transformers")
    assert held.by_kind["sliding"] == (n - n // 6) * t["sliding_window"] * per_layer_token


# ---------------------------------------------------------------------------- MoE decoders

def test_minimax_m2_every_layer_moe_with_a_router_bias_and_per_layer_qk_norms():
    c = cfg("minimax-m2")
    m = spec("minimax-m2")
    n, h = c["num_hidden_layers"], c["hidden_size"]
    assert m.moe.moe_layers == n and m.moe.num_shared_experts == 0
    assert m.params.router == n * c["num_local_experts"] * (h + 1)
    q, k = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    assert m.params.norms == n * (2 * h + q + k) + h
    assert kv_per_token(m) == n * 2 * c["num_key_value_heads"] * c["head_dim"] * BF16
    assert m.quantization == "fp8"


def test_ernie45_first_layer_dense_then_experts_with_two_shared():
    c = cfg("ernie-4.5-21b-a3b")
    m = spec("ernie-4.5-21b-a3b")
    assert [la.moe for la in m.layers[:2]] == [False, True]
    assert m.moe.shared_expert_intermediate_size == 2 * c["moe_intermediate_size"]
    d = c["hidden_size"] // c["num_attention_heads"]
    assert kv_per_token(m) == c["num_hidden_layers"] * 2 * c["num_key_value_heads"] * d * BF16


def test_hunyuan_a13b_every_layer_moe_with_a_shared_mlp_and_head_qk_norms():
    c = cfg("hunyuan-a13b")
    m = spec("hunyuan-a13b")
    n, h = c["num_hidden_layers"], c["hidden_size"]
    assert m.moe.moe_layers == n and m.moe.shared_expert_intermediate_size == \
        c["intermediate_size"] * c["num_shared_expert"][0]
    assert m.params.router == n * c["num_experts"] * h  # gate.wg: no bias
    assert kv_per_token(m) == n * 2 * c["num_key_value_heads"] * c["head_dim"] * BF16
    cla = dict(c, use_cla=True)
    with pytest.raises(DataError, match="use_cla"):
        parse_config(cla, origin="cla.json")


# ---------------------------------------------------------------------------- MLA: Kimi, V3.2

def test_kimi_k2_is_deepseek_v3_mla_with_384_experts_and_one_dense_layer():
    c = cfg("kimi-k2")
    m = spec("kimi-k2")
    assert m.architecture == "kimi_k2" and m.moe.num_experts == 384 and m.moe.dense_layers == 1
    latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]
    assert kv_per_token(m, "vllm") == c["num_hidden_layers"] * latent * BF16


def test_kimi_k25_unwraps_its_kimi_k2_text_model_and_says_the_checkpoint_is_int4():
    c = cfg("kimi-k2.5")["vision_config"]
    m = spec("kimi-k2.5")
    k2 = spec("kimi-k2")
    assert m.params_total == k2.params_total + m.vision_params
    # MoonViT: patch conv, the learned 64 x 64 position grid, 27 ViT blocks, final LayerNorm,
    # the 2 x 2 patch merger into the text model (the whole tower and projector, as
    # transformers 5.24 builds them: 471,143,920; the card says "400M" for the encoder)
    h, i = c["vt_hidden_size"], c["vt_intermediate_size"]
    block = 4 * (h * h + h) + h * i + i + i * h + h + 4 * h
    merged = 4 * c["mm_hidden_size"]
    tower = (3 * 14 * 14 * h + h + 64 * 64 * h + c["vt_num_hidden_layers"] * block + 2 * h
             + 2 * c["mm_hidden_size"] + merged * merged + merged + merged * 7168 + 7168)
    assert m.vision_params == tower == 471_143_920
    assert m.quantization == "int4-g32" and any("INT4" in n for n in m.notes)


def test_deepseek_v32_caches_an_indexer_key_beside_the_latent_and_reads_top_k_latents():
    c = cfg("deepseek-v3.2")
    m = spec("deepseek-v3.2")
    n = c["num_hidden_layers"]
    latent = (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * BF16
    index = c["index_head_dim"] + 4 * (c["index_head_dim"] // 128)  # FP8 + a scale per 128
    assert index_key_bytes(c["index_head_dim"], "vllm") == index
    assert kv_per_token(m, "vllm") == n * (latent + index)
    ctx = 65536
    held = kv_cache(m, ctx, BF16, "vllm")
    assert held.by_kind["dsa-indexer"] == n * ctx * index
    assert kv_read_bytes(m, ctx, BF16, "vllm") == pytest.approx(
        n * (ctx * index + c["index_topk"] * latent))
    # the dense V3 reads every latent
    v3 = spec("deepseek-v3.1")
    assert kv_read_bytes(v3, ctx, BF16, "vllm") == kv_cache(v3, ctx, BF16, "vllm")\
        .bytes_per_sequence


# ---------------------------------------------------------------------------- Mamba-2 hybrids

def test_granite4_hybrid_mamba_state_and_four_attention_layers():
    c = cfg("granite-4.0-h-tiny")
    m = spec("granite-4.0-h-tiny")
    n_attn = c["layer_types"].count("attention")
    assert kinds(m) == {"full": n_attn, "linear": c["num_hidden_layers"] - n_attn} == \
        {"full": 4, "linear": 36}
    assert all(not la.rope for la in m.layers if la.attention == "full")  # NoPE
    inner = c["mamba_n_heads"] * c["mamba_d_head"]
    conv = inner + 2 * c["mamba_n_groups"] * c["mamba_d_state"]
    state = conv * (c["mamba_d_conv"] - 1) + inner * c["mamba_d_state"]
    assert all(la.state_elements == state for la in m.layers if la.attention == "linear")
    d = c["hidden_size"] // c["num_attention_heads"]
    assert kv_per_token(m) == n_attn * 2 * c["num_key_value_heads"] * d * BF16
    held = kv_cache(m, 8192, BF16, "vllm").by_kind["linear-state"]
    assert held == 36 * state * BF16  # no float32 state asked for


def test_nemotron_h_pattern_mamba_attention_and_moe_blocks():
    c = cfg("nemotron-3-nano-30b-a3b")
    m = spec("nemotron-3-nano-30b-a3b")
    p = c["hybrid_override_pattern"]
    assert kinds(m) == {"linear": p.count("M"), "full": p.count("*"), "none": p.count("E")}
    assert m.moe.moe_layers == p.count("E") and not m.gated_mlp
    inner = c["mamba_num_heads"] * c["mamba_head_dim"]
    conv = inner + 2 * c["n_groups"] * c["ssm_state_size"]
    ssm = inner * c["ssm_state_size"]
    assert c["mamba_ssm_cache_dtype"] == "float32"
    held = kv_cache(m, 4096, BF16, "vllm")
    assert held.by_kind["linear-state"] == p.count("M") * (
        conv * (c["conv_kernel"] - 1) * BF16 + ssm * 4)
    assert kv_per_token(m) == p.count("*") * 2 * c["num_key_value_heads"] * c["head_dim"] * BF16


def test_nemotron_latent_moe_and_mtp_blocks_are_refused_not_miscounted():
    c = cfg("nemotron-3-nano-30b-a3b")
    c["moe_latent_size"] = 1024
    with pytest.raises(DataError, match="moe_latent_size"):
        parse_config(c, origin="super.json")


# ---------------------------------------------------------------------------- wrappers, refusals

def test_an_unknown_wrapper_around_a_known_text_model_is_unwrapped():
    text = cfg("qwen3-8b")
    m = parse_config({"model_type": "my_wrapper", "text_config": text}, origin="w.json")
    assert m.params_total == spec("qwen3-8b").params_total
    assert any("wrapper" in n for n in m.notes)


def test_an_unknown_wrapper_with_an_unmodelled_tower_is_refused_by_name():
    wrapped = {"model_type": "my_vlm", "text_config": cfg("qwen3-8b"),
               "vision_config": {"model_type": "my_vit", "hidden_size": 1024}}
    with pytest.raises(InputError) as e:
        parse_config(wrapped, origin="v.json")
    msg = str(e.value)
    assert "'my_vlm'" in msg and "vision_config (my_vit)" in msg and "not modelled" in msg
    assert "8.2B" in msg  # the text model's own size, as a bare size to try


@pytest.mark.parametrize("config", [
    {"model_type": "hunyuan", "hidden_size": 4096, "num_hidden_layers": 32,
     "num_attention_heads": 32, "num_key_value_heads": 8, "num_experts": 64, "moe_topk": 8,
     "moe_intermediate_size": 3072, "vocab_size": 128167},
    # Hunyuan-7B's quoted values (no verbatim config reconciles with the Hub total: README)
    {"model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_hidden_layers": 32,
     "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
     "vocab_size": 128167, "use_qk_norm": True, "tie_word_embeddings": True},
])
def test_unmodelled_model_types_are_refused_with_a_bare_size_to_use(config):
    with pytest.raises(InputError) as e:
        parse_config(config, origin="x.json")
    msg = str(e.value)
    assert repr(config["model_type"]) in msg and "not supported" in msg
    if "num_experts" in config:  # a MoE: the hint is a total-active size, not a dense one
        assert "bare MoE size" in msg and "-A" in msg
    else:
        assert "bare size" in msg


def test_a_linear_layer_type_in_an_architecture_without_its_state_is_still_refused():
    c = cfg("qwen3-8b")
    c["layer_types"] = ["linear_attention"] * c["num_hidden_layers"]
    with pytest.raises(DataError, match="recurrent state"):
        parse_config(c, origin="x.json")


def test_rough_size_counts_gemma3n_per_layer_embeddings():
    """The bare-size hint of an unknown Gemma-3n-like config once said '5.0B' for E4B, as it
    left out the per-layer input embeddings (262,144 x 35 layers x 256 = 2.35B). Dimensions
    here are E4B's text_config; gemma3n itself is now parsed (test_models_gemma3n.py)."""
    text = {"model_type": "gemma3n_text", "hidden_size": 2048, "num_hidden_layers": 35,
            "intermediate_size": [16384] * 35, "num_attention_heads": 8,
            "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 262400,
            "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256}
    config = {"model_type": "gemma3n", "text_config": text}
    from whichgpu.models.rough_size import rough_size

    attention = 2 * 2048 * 8 * 256 + 2 * 2048 * 2 * 256
    expected = (2 * 262400 * 2048 + 35 * (attention + 3 * 2048 * 16384)
                + 262144 * 35 * 256)
    assert rough_size(config) == (expected, None)
