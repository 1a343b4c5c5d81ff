"""Diffusion pipelines: per-component parameters against published counts, latent geometry
and the token counts the speed model needs."""

from __future__ import annotations

import pytest

from whichgpu.errors import DataError, InputError
from whichgpu.models import resolve_model
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.diffusion import component_params, parse_pipeline


def comp(alias: str, name: str) -> int:
    return resolve_model(alias).diffusion.component(name).params


def test_sd15_components_match_the_published_sizes():
    # model card: "an 860M UNet and 123M text encoder"
    assert round(comp("sd-1.5", "unet") / 1e6) == 860
    assert round(comp("sd-1.5", "text_encoder") / 1e6) == 123
    spec = resolve_model("sd-1.5")
    d = spec.diffusion
    assert (d.latent_channels, d.vae_scale_factor, d.patch_size) == (4, 8, 1)
    assert d.image_tokens(512, 512) == 64 * 64 and not d.guidance_distilled


def test_sdxl_unet_is_2_6b_with_two_clip_encoders():
    assert round(comp("sdxl", "unet") / 1e8) == 26  # SDXL paper: 2.6B UNet
    assert round(comp("sdxl", "text_encoder_2") / 1e6) == 695  # OpenCLIP bigG + projection


def test_flux_dev_is_12b_guidance_distilled_with_4096_tokens_at_1024():
    spec = resolve_model("flux.1-dev")
    d = spec.diffusion
    assert round(d.component("transformer").params / 1e9) == 12
    assert round(d.component("text_encoder_2").params / 1e9, 2) == 4.76  # T5-XXL encoder
    assert d.guidance_distilled and d.text_tokens == 512 and d.latent_channels == 16
    assert d.image_tokens(1024, 1024) == 4096
    schnell = resolve_model("flux.1-schnell").diffusion
    assert schnell.default_steps == 4 and schnell.text_tokens == 256
    # schnell has no guidance embedder: fewer parameters than dev
    assert schnell.component("transformer").params < d.component("transformer").params


def test_sd35_large_mmdit_is_8_1b():
    assert round(comp("sd-3.5-large", "transformer") / 1e8) == 81
    d = resolve_model("sd-3.5-large").diffusion
    assert d.text_tokens == 333 and d.patch_size == 2 and d.image_tokens(1024, 1024) == 4096


def test_qwen_image_20b_mmdit_and_qwen25_vl_encoder():
    spec = resolve_model("qwen-image")
    d = spec.diffusion
    assert round(d.component("transformer").params / 1e9) == 20
    assert round(d.component("text_encoder").params / 1e9, 2) == 8.29  # Qwen2.5-VL-7B
    assert not d.guidance_distilled and not d.is_video
    assert d.component("vae").params == 127_000_000  # recorded, with its source
    assert any("recorded" in n for n in spec.notes)


def test_wan_22_video_geometry_and_two_experts():
    five = resolve_model("wan-2.2-5b")
    d = five.diffusion
    assert d.is_video and d.vae_scale_factor == 16 and d.temporal_compression == 4
    assert d.latent_channels == 48 and d.patch_size == 2
    assert round(d.component("transformer").params / 1e9) == 5
    # 1280x704, 121 frames: 31 latent frames of 40x22 patches
    assert d.image_tokens(1280, 704, 121) == 31 * 40 * 22
    a14 = resolve_model("wan-2.2-14b")
    t1 = a14.diffusion.component("transformer").params
    assert round(t1 / 1e9) == 14 and a14.diffusion.component("transformer_2").params == t1
    assert a14.params_total - a14.params_active == t1  # one expert idle per step


def test_hidream_counts_every_text_encoder_including_llama():
    spec = resolve_model("hidream-i1")
    names = {c.name for c in spec.diffusion.components}
    assert {"text_encoder", "text_encoder_2", "text_encoder_3", "text_encoder_4"} <= names
    assert spec.diffusion.component("text_encoder_4").params == 8_030_261_248


def test_unknown_component_class_is_reported_not_guessed():
    assert component_params("SomeNewAutoencoder", ConfigReader({}, "x")) is None
    files = {"model_index.json": {"_class_name": "FluxPipeline",
                                  "transformer": ["diffusers", "FluxTransformer2DModel"],
                                  "vae": ["diffusers", "SomeNewAutoencoder"]},
             "transformer/config.json": {"num_layers": 1, "num_single_layers": 1},
             "vae/config.json": {}}
    spec = parse_pipeline(files.get, origin="p", source="t", name="t")
    assert spec.diffusion.component("vae").params == 0
    assert any("no parameter formula" in n for n in spec.notes)


def test_malformed_pipelines():
    with pytest.raises(InputError, match="not supported"):
        parse_pipeline({"model_index.json": {"_class_name": "MysteryPipeline"}}.get,
                       origin="p", source="t", name="t")
    files = {"model_index.json": {"_class_name": "FluxPipeline",
                                  "transformer": ["diffusers", "FluxTransformer2DModel"]}}
    with pytest.raises(DataError, match=r"transformer/config.json"):
        parse_pipeline(files.get, origin="p", source="t", name="t")
    files["transformer/config.json"] = {"num_layers": "19"}
    with pytest.raises(DataError, match="num_layers"):
        parse_pipeline(files.get, origin="p", source="t", name="t")


def test_edit_pipelines_attend_to_the_input_image_tokens_beside_the_generated_ones():
    kontext = resolve_model("black-forest-labs/FLUX.1-Kontext-dev", offline=True)
    dev = resolve_model("flux.1-dev", offline=True)
    k, d = kontext.diffusion, dev.diffusion
    assert k.component("transformer").params == d.component("transformer").params
    assert (k.reference_images, d.reference_images) == (1, 0)
    # FLUX packs 2x2 latent patches: 1024 / 8 / 2 = 64 per side, twice over for the input image
    assert k.image_tokens(1024, 1024) == 2 * d.image_tokens(1024, 1024) == 2 * 64 * 64
    edit = resolve_model("Qwen/Qwen-Image-Edit-2511", offline=True).diffusion
    assert edit.reference_images == 1 and edit.image_tokens(1024, 1024) == 2 * 64 * 64


def test_wan_i2v_takes_the_first_frame_as_input_channels_not_tokens():
    i2v = resolve_model("Wan-AI/Wan2.2-I2V-A14B-Diffusers", offline=True)
    t2v = resolve_model("wan-2.2-14b", offline=True)
    a, b = i2v.diffusion, t2v.diffusion
    assert a.reference_images == 0 and a.is_video
    assert a.image_tokens(1280, 720, 81) == b.image_tokens(1280, 720, 81)
    # patch embedding over 36 input channels (16 noise + 16 image latents + 4 mask), 1x2x2 patches
    extra = (36 - 16) * 1 * 2 * 2 * 5120
    assert a.component("transformer").params - b.component("transformer").params == extra
