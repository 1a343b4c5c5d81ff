"""Gemma 3n (``gemma3n``): every weight of the text decoder and its towers, written out by hand
from the shipped configs' own fields, against the published counts; KV sharing and sliding
windows in the KV cache; the LoRA shapes; what the parser refuses.

Published figures: google/gemma-3n-E4B-it holds 7,849,978,192 parameters (the Hub total of its
bf16 MLX copy; unsloth's fine-tuning notebooks print the same once their adapters are taken
off: presets/index.toml, gemma-3n-e4b). The tower sizes below were printed by transformers
5.24.0 + timm 1.0.31 building Gemma3nForConditionalGeneration(Gemma3nConfig()) on the meta
device (2026-12-01): audio_tower 681,348,640, vision_tower 294,126,912, embed_audio 3,345,408,
embed_vision 4,460,544; transformers 5.x leaves out the k/v projections and k norm of the 15
KV-shared layers (31,461,120 parameters) which the checkpoints store.
"""

from __future__ import annotations

import copy

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import DataError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.kv import kv_cache
from whichgpu.estimate.memory.training import lora_params
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.llm import streamed_weight_bytes
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model
from whichgpu.models.arch.gemma3n import MOBILENET_V5_PARAMS, mobilenet_vision, usm_audio
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.config_parse import parse_config
from whichgpu.models.gguf_recipe import recipe
from whichgpu.models.preset_index import find_preset

BF16 = 2
E4B_HUB_TOTAL = 7_849_978_192


def cfg(alias: str) -> dict:
    return copy.deepcopy(find_preset(alias).read_json("config.json"))


def text_params_by_hand(t: dict) -> int:
    """Gemma3nTextModel's tensors (with every layer's k/v, as stored), from the config."""
    h, n, d = t["hidden_size"], t["num_hidden_layers"], t["head_dim"]
    q, kv = t["num_attention_heads"] * d, t["num_key_value_heads"] * d
    ple, alt, rank = t["hidden_size_per_layer_input"], t["altup_num_inputs"], t["laurel_rank"]
    inter = t["intermediate_size"]
    widths = inter if isinstance(inter, list) else [inter] * n
    embed = t["vocab_size"] * h  # tied: no lm_head
    per_layer_embed = t["vocab_size_per_layer_input"] * n * ple
    per_layer_model_projection = h * n * ple + ple  # + its norm
    altup_model = 2 * (alt - 1) * h * h  # altup_projections + altup_unembed_projections
    final_norm = h
    attention = 2 * h * q + 2 * h * kv + 2 * d  # q, o, k, v; q_norm, k_norm (v_norm: no scale)
    layer_norms = 5 * h  # input, post-attention, pre/post-FFN, post-per-layer-input
    altup = h + alt * alt + alt * alt * alt + h * alt + h  # scale, coefs, router, router norm
    laurel = 2 * h * rank + h
    per_layer = 2 * h * ple
    layers = sum(attention + 3 * h * w + layer_norms + altup + laurel + per_layer
                 for w in widths)
    return (embed + per_layer_embed + per_layer_model_projection + altup_model + final_norm
            + layers)


def audio_params_by_hand(a: dict, text_hidden: int) -> int:
    h, heads, k = a["hidden_size"], a["conf_num_attention_heads"], a["conf_conv_kernel_size"]
    c0, c1 = a["sscp_conv_channel_size"]
    (k0h, k0w), (k1h, k1w) = a["sscp_conv_kernel_size"]
    f = a["input_feat_size"]
    for (_, kw), (_, sw) in zip(a["sscp_conv_kernel_size"], a["sscp_conv_stride_size"],
                                strict=True):
        f = (f + 2 - kw) // sw + 1  # one bin of padding each side of the frequency axis
    subsample = c0 * k0h * k0w + c0 + c0 * c1 * k1h * k1w + c1 + c1 * f * h
    ffw = 2 * (h * 4 * h) + 2 * h  # two linears, pre/post norms
    attn = 4 * h * h + h // heads + h * h + 2 * h  # q, k, v, pos_proj; per-dim scale; post
    lconv = 2 * h * h + h * k + h * h + 2 * h  # GLU start, depthwise conv, end; two norms
    block = 2 * ffw + attn + lconv + h
    embedder = a["vocab_size"] * h + 2 * h + h * text_hidden
    return subsample + a["conf_num_hidden_layers"] * block + embedder


def test_e4b_every_weight_by_hand_gives_the_hub_total_to_the_parameter():
    c = cfg("gemma-3n-e4b")
    t, v = c["text_config"], c["vision_config"]
    vision = MOBILENET_V5_PARAMS[v["architecture"]] + v["vocab_size"] * v["hidden_size"] \
        + 2 * v["hidden_size"] + v["hidden_size"] * t["hidden_size"]
    total = text_params_by_hand(t) + audio_params_by_hand(c["audio_config"], t["hidden_size"]) \
        + vision
    assert total == E4B_HUB_TOTAL
    m = parse_config(c, origin="e4b.json")
    assert m.params_total == total
    assert m.native_dtype == "bf16"


def test_towers_match_what_transformers_builds():
    c = cfg("gemma-3n-e4b")
    hidden = c["text_config"]["hidden_size"]
    audio = usm_audio(ConfigReader(c["audio_config"], "x"), hidden)
    vision = mobilenet_vision(ConfigReader(c["vision_config"], "x"), hidden)
    assert audio == 681_348_640 + 3_345_408 == audio_params_by_hand(c["audio_config"], hidden)
    assert vision == 294_126_912 + 4_460_544
    m = parse_config(c, origin="e4b.json")
    assert m.vision_params == audio + vision
    # the towers run once per image / audio clip: not in the per-token count
    assert m.params_active == m.params_total - audio - vision == text_params_by_hand(
        c["text_config"])


def test_effective_sizes_are_the_text_model_without_its_embedding_tables():
    """The card's E4B / E2B ('effective 4B / 2B'): the layers, without the token and per-layer
    embedding lookups, which speed and FLOPs leave out too."""
    for alias, effective in (("gemma-3n-e4b", 4e9), ("gemma-3n-e2b", 2e9)):
        m = resolve_model(alias, offline=True)
        t = cfg(alias)["text_config"]
        ple = t["vocab_size_per_layer_input"] * t["num_hidden_layers"] * \
            t["hidden_size_per_layer_input"]
        assert m.params.embedding == t["vocab_size"] * t["hidden_size"] + ple
        assert abs(m.params_active - m.params.embedding - effective) < 0.1 * effective


def test_e2b_counts_its_own_30_layers_and_mlp_width():
    c = cfg("gemma-3n-e2b")
    t = c["text_config"]
    assert t["num_hidden_layers"] == 30 and set(t["intermediate_size"]) == {8192}
    m = parse_config(c, origin="e2b.json")
    hidden = t["hidden_size"]
    towers = audio_params_by_hand(c["audio_config"], hidden) + \
        mobilenet_vision(ConfigReader(c["vision_config"], "x"), hidden)
    assert m.params_total == text_params_by_hand(t) + towers
    # maceip/gemma3n-executorch lists 4.46b text parameters for gemma-3n-E2B-it
    assert round(text_params_by_hand(t) / 1e9, 2) == 4.46
    assert round(m.params_total / 1e9) == 5  # the card's '5B raw'


@pytest.mark.parametrize("alias", ["gemma-3n-e4b", "gemma-3n-e2b"])
def test_kv_cache_skips_shared_layers_and_caps_sliding_layers_at_their_window(alias):
    t = cfg(alias)["text_config"]
    m = resolve_model(alias, offline=True)
    n, shared, window = t["num_hidden_layers"], t["num_kv_shared_layers"], t["sliding_window"]
    own = t["layer_types"][: n - shared]
    per_token_layer = 2 * t["num_key_value_heads"] * t["head_dim"] * BF16
    ctx = 32768
    expected = (own.count("full_attention") * ctx
                + own.count("sliding_attention") * window) * per_token_layer
    held = kv_cache(m, ctx, BF16, "transformers")
    assert held.bytes_per_sequence == expected
    # the shared layers hold nothing, the others hold their own
    assert [layer.kv_heads for layer in m.layers] == \
        [t["num_key_value_heads"]] * (n - shared) + [0] * shared
    # E4B: 4 full layers among the 20 that cache -> 4 x 2 x 2 heads x 256 x 2 bytes = 8 KiB
    # per token beyond the window (without sharing it would be 7 layers: 14 KiB)
    if alias == "gemma-3n-e4b":
        assert own.count("full_attention") * per_token_layer == 8192


def test_lora_on_attention_and_mlp_matches_unsloths_printed_count():
    """unslothai/notebooks nb/Gemma3N_(4B)-Conversational.ipynb: r=8 on the language model's
    attention and MLP modules of gemma-3n-E4B-it trains 19,210,240 parameters (every layer's
    k_proj and v_proj, the shared layers' too)."""
    m = resolve_model("gemma-3n-e4b", offline=True)
    w = Workload(m, task="lora", lora_rank=8,
                 lora_targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                               "down_proj"))
    assert lora_params(w) == 19_210_240


def test_hub_ids_resolve_offline_to_the_presets():
    for hub_id, alias in (("google/gemma-3n-E4B-it", "gemma-3n-e4b"),
                          ("google/gemma-3n-E2B", "gemma-3n-e2b")):
        m = resolve_model(hub_id, offline=True)
        assert m.architecture == "gemma3n"
        assert m.params_total == resolve_model(alias, offline=True).params_total


def test_speed_streams_the_layers_but_not_the_per_layer_table_nor_the_towers():
    """A text token reads the decoder's layers and the tied head (the token table, not the
    per-layer one): neither embedding lookup nor the audio and vision towers (read only when
    a clip or an image is encoded); vLLM still holds the towers in memory."""
    m = resolve_model("gemma-3n-e4b", offline=True)
    assert m.vision_params > 0
    w = Workload(m, quant="bf16", context=32768, engine="vllm")
    streamed, _ = streamed_weight_bytes(w, 1)
    # the tied output head is the token table alone (vocab x hidden), read for every token
    head = m.vocab_size * m.hidden_size
    assert streamed == pytest.approx(
        BF16 * (m.params_total - m.params.embedding - m.vision_params + head), rel=1e-6)
    assert estimate_memory(w).term("weights") == pytest.approx(BF16 * m.params_total, rel=1e-6)
    assert estimate_speed(w, get_gpu("rtx-4090")).rate("decode_tokens_per_s").typical > 0


def test_llama_cpp_keeps_both_input_tables_on_the_cpu_and_ties_only_the_token_head():
    """A Q4_K_M GGUF: token_embd and per_layer_token_embd (Q6_K, 6.5625 bits) in host RAM; the
    tied output head is a copy of token_embd alone (262,400 x 2,048), not of the 2.35B table."""
    m = resolve_model("gemma-3n-e4b", offline=True)
    r = recipe(m, "q4_k_m")
    by_name = {t.tensor.name: t for t in r.tensors}
    token = by_name["token_embd"]
    table = by_name["per_layer_token_embd"]
    t = cfg("gemma-3n-e4b")["text_config"]
    assert token.tensor.params == t["vocab_size"] * t["hidden_size"]
    assert table.tensor.params == t["vocab_size_per_layer_input"] * t["num_hidden_layers"] * \
        t["hidden_size_per_layer_input"]
    assert token.type == table.type == "Q6_K"
    mem = estimate_memory(Workload(m, quant="q4_k_m", context=4096, engine="llamacpp"))
    assert mem.host_total_bytes == pytest.approx(token.bytes + table.bytes, rel=1e-6)
    # on the GPU: the recipe's layers and plain tensors, plus the tied head (token_embd again)
    on_gpu = r.total_bytes - token.bytes - table.bytes + token.bytes
    assert mem.term("weights") == pytest.approx(on_gpu, rel=1e-3)

def test_an_unknown_vision_encoder_is_refused_by_name():
    c = cfg("gemma-3n-e4b")
    c["vision_config"]["architecture"] = "mobilenetv5_base"
    with pytest.raises(DataError, match=r"mobilenetv5_base.*not modelled"):
        parse_config(c, origin="x.json")


def test_a_layer_without_an_earlier_layer_to_share_with_is_refused():
    c = cfg("gemma-3n-e4b")
    t = c["text_config"]
    t["num_kv_shared_layers"] = t["num_hidden_layers"]
    with pytest.raises(DataError, match="num_kv_shared_layers"):
        parse_config(c, origin="x.json")
    c = cfg("gemma-3n-e4b")
    t = c["text_config"]
    t["layer_types"] = ["sliding_attention"] * 20 + ["full_attention"] * 15
    with pytest.raises(DataError, match="no earlier layer"):
        parse_config(c, origin="x.json")


def test_per_layer_mlp_widths_must_cover_every_layer():
    c = cfg("gemma-3n-e4b")
    c["text_config"]["intermediate_size"] = [16384] * 34
    with pytest.raises(DataError, match="one per layer"):
        parse_config(c, origin="x.json")


def test_a_text_only_gemma3n_config_counts_no_tower():
    c = cfg("gemma-3n-e4b")
    text = parse_config(c["text_config"], origin="t.json")
    assert text.architecture == "gemma3n_text"
    assert text.params_total == text_params_by_hand(c["text_config"])
