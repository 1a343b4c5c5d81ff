"""diffusers' sequential CPU offload (accelerate cpu_offload) streams a module in for each of
its forwards: the text encoders and the VAE once per image, the diffusion model every forward.
The speed model streamed every component every step, so FLUX.2-dev on an RTX 4090 (a 48 GB
Mistral text encoder beside a 64 GB transformer) spent 225 s a image on copies instead of
about 130."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.memory.diffusion import component_sizes
from whichgpu.estimate.speed.diffusion import _offload_seconds
from whichgpu.estimate.speed.hardware import hardware


def _split(w) -> tuple[float, float]:
    """(the diffusion model's bytes, every other component's bytes)."""
    d = w.diffusion_spec
    sizes = component_sizes(w)
    den = sizes[d.denoiser]
    others = sum(v for k, v in sizes.items()
                 if d.component(k).kind not in ("unet", "dit", "mmdit", "transformer"))
    return den, others


@pytest.mark.parametrize(("model", "task", "forwards_per_step"), [
    ("flux.2-dev", "image", 1),  # guidance-distilled: one pass a step
    ("sd-3.5-large", "image", 1),  # CFG batched: one forward of two samples
    ("qwen-image", "image", 2),  # QwenImagePipeline runs its CFG passes one after the other
])
def test_only_the_diffusion_model_is_streamed_every_forward(model, task, forwards_per_step):
    hw = hardware(get_gpu("rtx-4090"))  # PCIe 4: 25 GB/s (host_offload_gb_s)
    w = build_workload(model, task=task, offload="sequential")
    den, others = _split(w)
    assert others > 0
    at_50, _ = _offload_seconds(w, hw, 50)
    at_100, _ = _offload_seconds(w, hw, 100)
    bw = 25e9
    assert at_100 - at_50 == pytest.approx(den * 50 * forwards_per_step / bw)
    assert at_50 == pytest.approx((den * 50 * forwards_per_step + others) / bw)


def test_wan_22s_experts_take_turns_and_are_streamed_once_a_forward():
    """Wan 2.2 A14B: two 14B experts, one per step; its CFG passes run one after the other."""
    hw = hardware(get_gpu("rtx-4090"))
    w = build_workload("wan-2.2-14b", task="video", offload="sequential")
    d = w.diffusion_spec
    sizes = component_sizes(w)
    den = sizes[d.denoiser]
    encoders_and_vae = sum(v for k, v in sizes.items()
                           if d.component(k).kind not in ("unet", "dit", "mmdit", "transformer"))
    seconds, how = _offload_seconds(w, hw, 40)
    assert seconds == pytest.approx((den * 40 * 2 + encoders_and_vae) / 25e9)
    assert "80 forward passes" in how
