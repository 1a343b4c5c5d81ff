"""The 2025-26 pipelines (issue 14): FLUX.2 [dev], SD 3.5 Medium, HunyuanVideo and LTX-Video.

Counts are held against published figures where one exists (finetrainers' trainable-parameter
logs, a FLUX.2 VAE loader's safetensors count) and otherwise against what diffusers 0.42.1
builds from the same config on the meta device (scripts/check_counts_with_transformers.py
--pipelines reproduces those); the latent geometry is written out from the configs' fields.
"""

from __future__ import annotations

import copy

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.errors import DataError
from whichgpu.estimate.memory.diffusion import diffusion_lora_params
from whichgpu.models import resolve_model
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.diffusion.dits import hunyuan_video_params, ltx_video_params
from whichgpu.models.diffusion.vaes import ltx_video_vae_params
from whichgpu.models.preset_index import find_preset


def _component(alias: str, name: str):
    d = resolve_model(alias, offline=True).diffusion
    return d.component(name)


def _config(alias: str, rel: str) -> dict:
    return copy.deepcopy(find_preset(alias).read_json(rel))


# counts diffusers 0.42.1 builds from each preset's component config (parameters + persistent
# buffers, as a checkpoint stores them)
DIFFUSERS_COUNTS = {
    ("flux.2-dev", "transformer"): 32_223_281_152,
    ("flux.2-dev", "vae"): 84_046_372,
    ("hunyuanvideo", "transformer"): 12_821_012_544,
    ("hunyuanvideo", "vae"): 246_478_803,
    ("ltx-video", "transformer"): 1_923_385_472,
    ("ltx-video", "vae"): 419_193_905,
    ("ltx-video-13b", "transformer"): 13_042_569_344,
    ("ltx-video-13b", "vae"): 1_246_913_778,
    ("sd-3.5-medium", "transformer"): 2_469_663_936,
}


@pytest.mark.parametrize(("alias", "name"), sorted(DIFFUSERS_COUNTS))
def test_component_counts_equal_what_diffusers_builds(alias, name):
    assert _component(alias, name).params == DIFFUSERS_COUNTS[(alias, name)]


def test_ltx_video_transformer_is_the_count_a_full_fine_tune_trains():
    """finetrainers' full fine-tune of Lightricks/LTX-Video logs 1,923,385,472 trainable
    parameters (docs/training/ltx_video.md)."""
    assert _component("ltx-video", "transformer").params == 1_923_385_472


@pytest.mark.parametrize(("alias", "published"), [("ltx-video", 117_440_512),
                                                  ("hunyuanvideo", 163_577_856)])
def test_lora_on_the_attention_projections_matches_finetrainers_logs(alias, published):
    """Rank 128 on to_q, to_k, to_v, to_out.0: the counts finetrainers logs. HunyuanVideo's
    includes the token refiner's two attention blocks, whose modules have the same names."""
    w = build_workload(alias, task="image-lora", lora_rank=128,
                       lora_targets="to_q,to_k,to_v,to_out.0")
    d = w.model.diffusion
    assert diffusion_lora_params(w, d.component(d.denoiser)) == published


def test_flux2_vae_is_the_loaders_safetensors_count_plus_its_batch_norm_statistics():
    """A FLUX.2 VAE loader reports 84,046,115 parameters in the shipped file; the checkpoint
    also stores the BatchNorm's running mean and variance over the 4 x 32 packed latent
    channels and its step counter."""
    assert _component("flux.2-dev", "vae").params == 84_046_115 + 2 * 4 * 32 + 1


def test_flux2_dev_text_encoder_is_mistral_small_with_its_pixtral_tower():
    te = _component("flux.2-dev", "text_encoder")
    mistral = resolve_model("mistral-small-3.2", offline=True)
    assert te.params == mistral.params_total
    assert te.kind == "llm" and te.max_tokens == 512


def test_hunyuanvideo_text_encoder_is_a_llama_without_its_lm_head():
    cfg = _config("hunyuanvideo", "text_encoder/config.json")
    from whichgpu.models.config_parse import parse_config

    full = parse_config(dict(cfg, architectures=["LlamaForCausalLM"]), origin="t")
    te = _component("hunyuanvideo", "text_encoder")
    assert te.params == full.params_total - cfg["vocab_size"] * cfg["hidden_size"]


def test_flux2_geometry_packs_2x2_latents_of_32_channels():
    d = resolve_model("flux.2-dev", offline=True).diffusion
    assert (d.latent_channels, d.vae_scale_factor, d.patch_size) == (32, 8, 2)
    assert d.guidance_distilled and d.default_steps == 50
    assert d.image_tokens(1024, 1024) == (1024 // 16) ** 2
    assert d.component("transformer").kind == "mmdit"


def test_hunyuanvideo_geometry_from_its_vae_and_patch():
    """VAE: 8x spatial, 4x temporal, 16 channels; transformer patch 2 x 2 (1 in time):
    1280 x 720 x 129 frames = 33 latent frames x 45 x 80 tokens."""
    vae = _config("hunyuanvideo", "vae/config.json")
    tr = _config("hunyuanvideo", "transformer/config.json")
    d = resolve_model("hunyuanvideo", offline=True).diffusion
    assert d.is_video and d.latent_channels == vae["latent_channels"]
    assert d.vae_scale_factor == vae["spatial_compression_ratio"]
    assert d.temporal_compression == vae["temporal_compression_ratio"]
    frames = (129 - 1) // vae["temporal_compression_ratio"] + 1
    side = vae["spatial_compression_ratio"] * tr["patch_size"]
    assert d.image_tokens(1280, 720, 129) == frames * (1280 // side) * (720 // side) == 118_800
    assert d.component("transformer").kind == "mmdit"  # joint attention over text + video
    assert d.guidance_distilled and d.text_tokens == 256


def test_ltx_video_geometry_32x_spatial_8x_temporal_1x1_patches():
    """patch_size 4 x three spatio-temporal stages = 32x; 2^3 = 8x in time."""
    vae = _config("ltx-video", "vae/config.json")
    stages = sum(vae["spatio_temporal_scaling"])
    d = resolve_model("ltx-video", offline=True).diffusion
    assert d.vae_scale_factor == vae["patch_size"] * 2 ** stages == 32
    assert d.temporal_compression == 2 ** stages == 8
    assert d.latent_channels == 128 and d.patch_size == 1
    assert d.image_tokens(704, 512, 161) == 21 * 22 * 16
    assert d.component("transformer").kind == "dit"  # cross-attention to T5, no joint tokens
    assert not d.guidance_distilled


def test_ltx_13b_vae_geometry_is_read_from_its_stated_ratios():
    d = resolve_model("ltx-video-13b", offline=True).diffusion
    assert (d.vae_scale_factor, d.temporal_compression) == (32, 8)


def test_sd35_medium_uses_dual_attention_in_its_first_13_blocks():
    tr = _config("sd-3.5-medium", "transformer/config.json")
    assert tr["dual_attention_layers"] == list(range(13))
    large = _component("sd-3.5-large", "text_encoder_3")
    assert _component("sd-3.5-medium", "text_encoder_3").params == large.params
    # the 384 x 384 position table it stores is part of the count
    assert _component("sd-3.5-medium", "transformer").params > 384 * 384 * 1536


def test_token_replace_image_conditioning_is_refused_by_name():
    cfg = _config("hunyuanvideo", "transformer/config.json")
    cfg["image_condition_type"] = "token_replace"
    with pytest.raises(DataError, match="image_condition_type"):
        hunyuan_video_params(ConfigReader(cfg, "t"))


def test_ltx_layouts_it_does_not_model_are_refused_not_miscounted():
    tr = _config("ltx-video", "transformer/config.json")
    tr["patch_size"] = 2
    with pytest.raises(DataError, match="patch_size"):
        ltx_video_params(ConfigReader(tr, "t"))
    vae = _config("ltx-video-13b", "vae/config.json")
    vae["downsample_type"] = ["spatial", "temporal", "diagonal", "spatiotemporal"]
    with pytest.raises(DataError, match="downsample"):
        ltx_video_vae_params(ConfigReader(vae, "v"))


def test_the_transformer_count_follows_the_config_not_a_table():
    """One more double block adds exactly one block's parameters (8 d^2 + 4 head_dim + two
    SwiGLU MLPs for FLUX.2)."""
    from whichgpu.models.diffusion.dits import flux2_params

    cfg = _config("flux.2-dev", "transformer/config.json")
    d = cfg["attention_head_dim"] * cfg["num_attention_heads"]
    mlp = int(d * cfg["mlp_ratio"])
    base = flux2_params(ConfigReader(cfg, "t"))
    cfg["num_layers"] += 1
    block = 8 * d * d + 4 * cfg["attention_head_dim"] + 2 * (d * 2 * mlp + mlp * d)
    assert flux2_params(ConfigReader(cfg, "t")) - base == block


@pytest.mark.parametrize("hub_id", ["black-forest-labs/FLUX.2-dev",
                                    "hunyuanvideo-community/HunyuanVideo", "Lightricks/LTX-Video",
                                    "Lightricks/LTX-Video-0.9.7-dev",
                                    "stabilityai/stable-diffusion-3.5-medium"])
def test_new_pipelines_resolve_offline_by_hub_id(hub_id):
    spec = resolve_model(hub_id, offline=True)
    assert spec.source.startswith("preset:") and spec.diffusion is not None
    assert spec.hub_id == hub_id
