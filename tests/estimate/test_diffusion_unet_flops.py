"""A UNet's pass is counted layer by layer from its config, not as parameters x positions x one
fraction: SD 1.x keeps a transformer at the full latent resolution, SDXL none there, so the
same rule over-counted SDXL against SD 1.5 (diff9: SDXL on a 4090 at 5.5 s for 30 steps)."""

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.estimate.speed.diffusion import pass_flops_split
from whichgpu.estimate.speed.diffusion_unet import preset_layout, unet_macs


def test_sd15_count_matches_bk_sdm_published_macs():
    """BK-SDM (Kim et al. 2023, arXiv 2305.15798, Table: SDM-v1.4 U-Net 338.7 G MACs at
    512x512, without the attention score matmuls); SD 1.5 has SD 1.4's UNet."""
    dense, attn = unet_macs(preset_layout("preset:sd-1.5"), 64, 64)
    assert dense == pytest.approx(338.7e9, rel=0.005)
    assert attn > 0.1 * dense  # a 4,096-token self-attention at the full latent resolution


def test_sdxl_does_less_work_per_parameter_and_position_than_sd15():
    """SDXL's transformer layers sit at 1/2 and 1/4 of the latent side (Podell et al. 2023,
    section 2.1), so per parameter and latent position it does less than SD 1.5."""
    per = {}
    for name, latent in (("sd-1.5", 64), ("sdxl", 128)):
        w = build_workload(name, task="image")
        d = w.model.diffusion
        lin, attn, positions, formula = pass_flops_split(w)
        assert positions == latent * latent and "counted layer by layer" in formula
        per[name] = (lin + attn) / (d.component(d.denoiser).params * positions)
    assert per["sdxl"] < 0.8 * per["sd-1.5"]


def test_unet_pass_is_split_into_matmuls_and_attention_that_grows_quadratically():
    """The attention matmuls are returned apart (they run at the attention rate) and grow with
    the square of the positions, the convolutions and linears linearly."""
    w512 = build_workload("sd-1.5", task="image", resolution="512x512")
    w768 = build_workload("sd-1.5", task="image", resolution="768x768")
    lin5, attn5, _, _ = pass_flops_split(w512)
    lin7, attn7, _, _ = pass_flops_split(w768)
    assert attn5 > 0
    assert lin7 / lin5 == pytest.approx(2.25, rel=0.05)
    assert attn7 / attn5 > 4.0  # (9/4)^2 = 5.06 for the self-attention, the text part linear


def test_non_preset_sources_fall_back_to_the_prior():
    assert preset_layout("config:./unet.json") is None
    assert preset_layout("preset:no-such-model") is None
