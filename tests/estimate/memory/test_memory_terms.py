"""Each memory term on the shipped presets, with exact expected values: these tests fail if a
term's rule is broken (exact checkpoint bytes, LoRA shapes, ZeRO stages, KV sharding by KV heads,
VAE tiling, sequential offload, norms, quantization formats)."""

from dataclasses import replace

import pytest

from gguf_files import write_gguf
from paths import DATA
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.kv import kv_cache
from whichgpu.estimate.memory.training import lora_params
from whichgpu.estimate.memory.weights import component_bytes
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model
from whichgpu.models.quant import get_quant
from whichgpu.models.spec import CheckpointInfo

LLAMA_8B = resolve_model("llama-3.1-8b", offline=True)
SDXL = resolve_model("sdxl", offline=True)


# ------------------------------------------------------------------ weights

def test_weights_are_the_exact_gguf_bytes_when_the_file_is_known(tmp_path):
    spec = resolve_model(str(write_gguf(tmp_path / "tiny.gguf")))
    ck = spec.checkpoint
    assert ck is not None and ck.total_bytes > 0
    e = estimate_memory(Workload(spec))
    assert e.details["model_weight_bytes"] == ck.total_bytes
    assert e.details["weights_exact"] is True
    # llama.cpp keeps the token embedding in host RAM; a tied output head is loaded again on
    # the GPU (TENSOR_DUPLICATED), so GPU + host = the file + that copy
    host = sum(t.bytes for t in e.host_terms if t.name == "weights")
    tied = 0 if spec.params.lm_head else ck.embedding_bytes
    assert e.term("weights") + host == ck.total_bytes + tied
    # another format than the file's is computed from counts x bits instead
    other = estimate_memory(Workload(spec, quant="q4_k_m"))
    assert other.term("weights") != ck.total_bytes and not other.details["weights_exact"]


def test_weights_are_the_exact_safetensors_bytes_when_known():
    exact = 16_060_000_123  # deliberately not params x 2
    spec = replace(LLAMA_8B, checkpoint=CheckpointInfo(
        total_bytes=exact, bytes_by_dtype={"BF16": exact}, source="safetensors:test"))
    assert estimate_memory(Workload(spec)).term("weights") == exact
    assert estimate_memory(Workload(spec, quant="bf16")).term("weights") == exact
    lora = estimate_memory(Workload(spec, task="lora"))
    assert lora.term("weights") == exact  # the frozen base as stored
    assert estimate_memory(Workload(spec, quant="fp8")).term("weights") < exact * 0.6


def test_bf16_weights_count_every_tensor_norms_included():
    p = LLAMA_8B.params
    assert p.norms == (2 * 32 + 1) * 4096
    assert estimate_memory(Workload(LLAMA_8B, quant="bf16")).term("weights") == \
        LLAMA_8B.params_total * 2


def test_gguf_formats_keep_norms_in_f32():
    p = LLAMA_8B.params
    q = get_quant("q8_0")
    assert q.norm_bits == 32
    expected = ((p.attention + p.mlp) * 8.5 + p.embedding * 8.5 + p.lm_head * 8.5) / 8 \
        + p.norms * 4
    e = estimate_memory(Workload(LLAMA_8B, quant="q8_0"))
    assert e.details["model_weight_bytes"] == int(expected)
    # llama.cpp keeps the token embedding (the input layer) in host RAM
    assert e.term("weights") == pytest.approx(expected - p.embedding * 8.5 / 8, abs=64)


def test_fp8_keeps_embedding_head_and_norms_in_16_bit():
    p = LLAMA_8B.params
    expected = (p.attention + p.mlp) * 1 + (p.embedding + p.lm_head + p.norms) * 2
    assert estimate_memory(Workload(LLAMA_8B, quant="fp8")).term("weights") == expected


def test_mxfp4_on_a_dense_model_quantizes_every_linear():
    p = LLAMA_8B.params
    e = estimate_memory(Workload(LLAMA_8B, quant="mxfp4"))
    expected = (p.attention + p.mlp) * 4.25 / 8 + (p.embedding + p.lm_head + p.norms) * 2
    assert e.term("weights") == int(expected)
    assert "no experts" in e.terms[0].formula


def test_mxfp4_on_gpt_oss_quantizes_only_the_experts():
    oss = resolve_model("gpt-oss-20b", offline=True)
    p = oss.params
    e = estimate_memory(Workload(oss, quant="mxfp4"))
    expected = (p.experts * 4.25 + (p.attention + p.mlp + p.shared_experts) * 16
                + (p.embedding + p.lm_head) * 16 + (p.norms + p.router + p.other) * 16) / 8
    assert e.term("weights") == int(expected)


@pytest.mark.parametrize("name,bits", [("gptq-g32", 4 + 20 / 32), ("gptq-g64", 4 + 20 / 64),
                                       ("awq-g64", 4 + 20 / 64), ("gptq-int8-g32", 8 + 24 / 32),
                                       ("GPTQ-int4-g128", 4 + 20 / 128)])
def test_gptq_and_awq_take_their_group_size(name, bits):
    q = get_quant(name)
    assert q.linear_bits == pytest.approx(bits)
    p = LLAMA_8B.params
    w = estimate_memory(Workload(LLAMA_8B, quant=name, engine="vllm")).term("weights")
    assert w == int((p.attention + p.mlp) * bits / 8 + (p.embedding + p.lm_head + p.norms) * 2)


def test_smaller_groups_cost_more_memory():
    sizes = [estimate_memory(Workload(LLAMA_8B, quant=f"gptq-g{g}")).term("weights")
             for g in (256, 128, 64, 32)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]


@pytest.mark.parametrize("bad", ["awq-int8-g64", "gptq-g48", "gptq-g0"])
def test_impossible_group_formats_are_refused(bad):
    with pytest.raises(InputError):
        get_quant(bad)


# ------------------------------------------------------------------ LoRA

def test_lora_all_linear_on_llama_3_8b_matches_peft():
    # PEFT prints "trainable params: 41,943,040" for r=16 on every linear of Llama 3 8B
    w = Workload(LLAMA_8B, task="lora", lora_rank=16)
    assert lora_params(w) == 41_943_040


def test_lora_on_gqa_projections_uses_in_plus_out_features():
    # k_proj and v_proj are 4,096 -> 1,024 (8 KV heads x 128): not square
    w = Workload(LLAMA_8B, task="lora", lora_rank=16, lora_targets=("k_proj", "v_proj"))
    assert lora_params(w) == 2 * 16 * (4096 + 1024) * 32


# ------------------------------------------------------------------ ZeRO

@pytest.mark.parametrize("zero,sharded", [
    (0, set()),
    (1, {"optimizer_states", "master_weights"}),
    (2, {"optimizer_states", "master_weights", "gradients"}),
    (3, {"optimizer_states", "master_weights", "gradients", "weights"}),
])
def test_zero_stages_shard_exactly_their_states(zero, sharded):
    one = estimate_memory(Workload(LLAMA_8B, task="full-ft"))
    eight = estimate_memory(Workload(LLAMA_8B, task="full-ft", gpus=8, zero=zero))
    for term in ("weights", "gradients", "optimizer_states", "master_weights"):
        expected = one.term(term) / 8 if term in sharded else one.term(term)
        assert eight.term(term) == pytest.approx(expected, rel=1e-6), (zero, term)
    assert (eight.term("zero3_working_set") > 0) == (zero == 3)


# ------------------------------------------------------------------ KV cache under TP

def test_kv_cache_splits_by_kv_heads_and_replicates_when_gpus_outnumber_them():
    qwen = resolve_model("qwen2.5-1.5b", offline=True)  # 12 query heads, 2 KV heads
    assert (qwen.num_attention_heads, qwen.num_kv_heads) == (12, 2)
    whole = kv_cache(qwen, 8192, 2.0, "vllm").bytes_per_sequence
    two = estimate_memory(Workload(qwen, context=8192, engine="vllm", gpus=2))
    four = estimate_memory(Workload(qwen, context=8192, engine="vllm", gpus=4))
    assert two.term("kv_cache") == whole // 2
    # 4 GPUs, 2 KV heads: each KV head is held by 2 GPUs, so each GPU still holds half
    assert four.term("kv_cache") == whole // 2


# ------------------------------------------------------------------ diffusion

def test_vae_tiling_caps_the_decode_at_one_tile():
    def decode(res, tiling):
        w = Workload(SDXL, task="image", resolution=res, vae_tiling=tiling)
        return estimate_memory(w).details["vae_decode_bytes"]

    def output(res):
        return res[0] * res[1] * 3 * 4  # decoded image in fp32

    big, small = (2048, 2048), (1024, 1024)
    assert decode(big, True) - output(big) == decode(small, True) - output(small)
    assert decode(big, True) < decode(big, False) / 8
    assert decode(small, False) - output(small) == pytest.approx(
        4 * (decode(small, True) - output(small)), rel=1e-6)  # 1024^2 = 4 tiles of 512^2


def test_sequential_offload_keeps_one_denoiser_block_on_the_gpu():
    d = SDXL.diffusion
    unet = d.component("unet")
    sizes = {c.name: component_bytes(c, get_quant("fp16"), None) for c in d.components}
    seq = estimate_memory(Workload(SDXL, task="image", offload="sequential", vae_slicing=True))
    model = estimate_memory(Workload(SDXL, task="image", offload="model", vae_slicing=True))
    block = sizes["unet"] / unet.num_layers
    assert seq.term("weights") <= max(block, sizes["vae"],
                                      sum(v for k, v in sizes.items() if "text" in k) / 24) + 1
    assert seq.term("weights") < sizes["unet"] / 10
    assert seq.total_bytes < model.total_bytes


# ------------------------------------------------------------------ S15 line

def test_rule_of_thumb_line_explains_the_difference(cli):
    d = cli("memory", "llama-3.1-8b", "--task", "full-ft", "--json").json()
    assert "16.0 bytes per parameter" in d["rule_of_thumb"]["explanation"]
    q = cli("memory", "llama-3.1-8b", "--task", "qlora", "--json").json()
    assert any("nf4-dq (QLoRA's usual base format" in a for a in q["assumptions"])
    assert not any("checkpoint's format" in a for a in q["assumptions"])
    r = cli("memory", "llama-3.1-8b", "--quant", "mxfp4", "--json").json()
    # rule and estimate use the same 4.25-bit linears: the difference is embeddings + runtime
    assert r["rule_of_thumb"]["bytes"] < r["breakdown"]["weights"] < 2 * r["rule_of_thumb"][
        "bytes"]


# ------------------------------------------------------------------ what would make it fit

def test_two_changes_are_suggested_when_no_single_change_is_enough():
    from whichgpu.catalog.gpus import get_gpu
    from whichgpu.estimate.memory.changes import suggestions

    flux = resolve_model("flux.1-dev", offline=True)
    gpu = get_gpu("rtx-4090")
    changes = suggestions(Workload(flux, task="image"), gpu)
    singles = {c.description: c for c in changes if " + " not in c.description}
    fp8, offload = (singles["fp8 weights (--quant fp8)"],
                    singles["offload idle components to the CPU (--offload model)"])
    assert not fp8.fits_on and not offload.fits_on  # neither alone holds FLUX on 24 GB
    pair = next(c for c in changes if "--quant fp8" in c.description
                and "--offload model" in c.description)
    assert pair.fits_on == ("rtx-4090",)
    assert pair.total_bytes == estimate_memory(
        Workload(flux, task="image", quant="fp8", offload="model")).total_bytes
    assert pair.total_bytes <= gpu.usable_memory_bytes < min(fp8.total_bytes,
                                                             offload.total_bytes)


def test_pairs_are_not_offered_when_one_change_suffices():
    from whichgpu.catalog.gpus import get_gpu
    from whichgpu.estimate.memory.changes import suggestions

    changes = suggestions(Workload(LLAMA_8B, quant="bf16", context=32768, engine="vllm"),
                          get_gpu("rtx-4090"))
    assert any(c.fits_on for c in changes)
    assert not any(" + " in c.description for c in changes)


# ------------------------------------------------------------------ linear attention (SSM) state

def _qwen3_next():
    import json

    from whichgpu.models.config_parse import parse_config

    path = DATA / "models" / "configs" / \
        "qwen3-next-80b-a3b-instruct.json"
    return parse_config(json.loads(path.read_text("utf-8")), origin=str(path))


def test_qwen3_next_layers_hold_a_constant_gated_deltanet_state():
    m = _qwen3_next()
    linear = [la for la in m.layers if la.attention == "linear"]
    full = [la for la in m.layers if la.attention == "full"]
    assert (len(linear), len(full)) == (36, 12)  # full_attention_interval 4
    conv_dim = 2 * 16 * 128 + 32 * 128  # q and k (16 key heads) + v (32 value heads)
    assert all(la.state_elements == conv_dim * 3 + 32 * 128 * 128 for la in linear)
    assert 3e9 < m.params_active - m.params.embedding < 4e9  # "80B total, 3B activated"


@pytest.mark.parametrize("engine,elem", [("vllm", 2), ("transformers", 2), ("llamacpp", 4)])
def test_qwen3_next_cache_is_full_layer_kv_plus_the_state(engine, elem):
    m = _qwen3_next()
    state = 36 * (8192 * 3 + 32 * 128 * 128) * elem
    per_token = 12 * 2 * 2 * 256 * 2  # 12 full layers x K,V x 2 KV heads x 256 x 2 bytes
    for ctx in (4096, 65536):
        kv = kv_cache(m, ctx, 2.0, engine)
        assert kv.by_kind["linear-state"] == state
        assert kv.bytes_per_sequence == kv.context_cached * per_token + state
    # the state does not grow with the context, the KV of the full layers does
    a, b = kv_cache(m, 4096, 2.0, engine), kv_cache(m, 65536, 2.0, engine)
    assert a.by_kind["linear-state"] == b.by_kind["linear-state"] > 0


def test_linear_layer_types_in_other_architectures_are_refused():
    from whichgpu.errors import DataError
    from whichgpu.models.config_parse import parse_config
    from whichgpu.models.preset_index import find_preset

    cfg = dict(find_preset("llama-3.2-1b").read_json("config.json"))
    cfg["layer_types"] = ["linear_attention"] * (cfg["num_hidden_layers"] - 1) + [
        "full_attention"]
    with pytest.raises(DataError, match="recurrent state of this architecture is not modelled"):
        parse_config(cfg, origin="hybrid.json")


# ------------------------------------------------------------------ diffusion stages

def test_model_offload_encodes_with_the_largest_text_encoder_alone():
    hidream = resolve_model("hidream-i1", offline=True)
    d = hidream.diffusion
    w = Workload(hidream, task="image", offload="model", quant="fp8")
    e = estimate_memory(w)
    sizes = e.details["components_bytes"]
    encoders = [c.name for c in d.components if c.name.startswith("text_encoder")]
    largest = max(sizes[n] for n in encoders)
    assert largest < sum(sizes[n] for n in encoders) - 1e9  # four encoders, Llama 3.1 8B largest
    # the peak stage holds the denoiser or one encoder, never all encoders together
    assert e.term("weights") in (largest, sizes["transformer"],
                                 sizes["transformer"] + sizes["vae"])
    assert e.term("weights") < sum(sizes[n] for n in encoders)


def test_video_activations_are_one_blocks_working_set_not_a_multiple_of_depth():
    wan = resolve_model("wan-2.2-14b", offline=True)
    den = wan.diffusion.component("transformer")
    w = Workload(wan, task="video", offload="model")  # 1280x720, 81 frames
    e = estimate_memory(w)
    tokens = 21 * (720 // 16) * (1280 // 16)  # (81-1)/4+1 latent frames x 45 x 80 patches
    assert e.details["tokens"] == tokens == 75_600
    per_token = max(20 * den.hidden_size, 6 * den.hidden_size + 4 * den.ffn_dim)
    assert e.details["denoiser_activation_bytes"] == tokens * per_token  # CFG runs sequentially
    assert e.details["denoiser_activation_bytes"] < 10e9  # was 93.5 GB with a depth multiple
    # the same pipeline doubles it when CFG is batched into one pass (FLUX-style pipelines)
    flux = resolve_model("flux.1-dev", offline=True)
    one = estimate_memory(Workload(flux, task="image")).details["denoiser_activation_bytes"]
    two = estimate_memory(Workload(flux, task="image", cfg=True)).details[
        "denoiser_activation_bytes"]
    assert two == 2 * one


def test_image_lora_parameters_come_from_the_denoisers_linear_shapes():
    flux = resolve_model("flux.1-dev", offline=True)
    w = Workload(flux, task="image-lora", lora_rank=16,
                 lora_targets=("to_q", "to_k", "to_v", "to_out.0", "add_q_proj", "add_k_proj",
                               "add_v_proj", "to_add_out", "ff.net.0.proj", "ff.net.2",
                               "ff_context.net.0.proj", "ff_context.net.2"))
    e = estimate_memory(w)
    d = 3072
    # diffusers' FLUX LoRA script targets: 19 double blocks x 36 r d + 38 single blocks x 6 r d
    assert e.details["lora_params"] == 16 * d * (19 * 36 + 38 * 6)
    assert e.term("adapter_weights") == e.details["lora_params"] * 4
    sdxl = Workload(SDXL, task="image-lora", lora_rank=4,
                    lora_targets=("to_q", "to_k", "to_v", "to_out.0"))
    # SDXL's 70 transformer layers: self-attention 4 x (c + c), cross k/v from 2,048 features
    unet = SDXL.diffusion.component("unet")
    expected = sum(4 * (g.in_features + g.out_features) * g.count for g in unet.linears
                   if g.name in ("to_q", "to_k", "to_v", "to_out.0"))
    assert estimate_memory(sdxl).details["lora_params"] == expected
    assert any(g.in_features == 2048 and g.name == "to_k" for g in unet.linears)
