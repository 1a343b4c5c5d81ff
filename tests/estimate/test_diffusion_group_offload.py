"""diffusers' group offload with CUDA streams as its own offload mode (issue 29's build list:
it was modelled as sequential offload). Memory: the group that runs and the next one,
prefetched (block_level: two blocks; leaf_level: two of the largest modules). Speed: the
diffusion model still crosses the host link every forward pass, but on a side stream behind
the compute, so only what the compute does not cover shows."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.diffusion import _group_resident, component_sizes
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.diffusion import _offload_seconds
from whichgpu.estimate.speed.hardware import hardware


@pytest.mark.parametrize("mode", ["group", "group-leaf"])
def test_the_group_that_runs_and_the_next_one_are_resident(mode):
    w = build_workload("flux.1-dev", task="image", offload=mode)
    d = w.diffusion_spec
    den = d.component(d.denoiser)
    sizes = component_sizes(w)
    encoders = [c for c in d.components if c.kind in ("clip", "t5", "llm")]
    vae = [c for c in d.components if c.kind == "vae"]
    resident, _ = _group_resident(w, den, sizes[d.denoiser], encoders, vae, sizes)
    one = (sizes[d.denoiser] / den.num_layers if mode == "group" else
           sizes[d.denoiser] * den.largest_module_params / den.params)
    assert resident["denoise"] == pytest.approx(2 * one)
    assert resident["denoise"] < sizes[d.denoiser] / 10


def test_group_offload_fits_where_the_whole_pipeline_does_not():
    gpu = get_gpu("rtx-4090")
    whole = estimate_memory(build_workload("flux.1-dev", task="image")).total_bytes
    model = estimate_memory(build_workload("flux.1-dev", task="image",
                                           offload="model")).total_bytes
    group = estimate_memory(build_workload("flux.1-dev", task="image",
                                           offload="group")).total_bytes
    leaf = estimate_memory(build_workload("flux.1-dev", task="image",
                                          offload="group-leaf")).total_bytes
    seq = estimate_memory(build_workload("flux.1-dev", task="image",
                                         offload="sequential")).total_bytes
    assert whole > gpu.usable_memory_bytes >= group
    assert seq <= leaf <= group < model  # a leaf is smaller than a block
    assert group - seq < 1e9  # one prefetched block more than a streamed module


def _run(model, gpu, offload, **kw):
    w = build_workload(model, offload=offload, **kw)
    return w, estimate_speed(w, get_gpu(gpu))


def _seconds(r) -> float:
    return r.times["seconds_per_image"].typical


def test_streams_hide_the_copies_behind_the_compute():
    # Wan 2.1 14B at 720p, 33 frames on an A100: a forward computes for seconds, its 28.6 GB
    # cross PCIe 4 in about 1.1 s, so the copies hide (diffusers' Wan page: leaf_level with
    # streams about 9 minutes on an A100, block_level without about 30)
    kw = {"task": "video", "resolution": "832x720", "frames": 33, "steps": 50}
    hw = hardware(get_gpu("a100-80gb"))
    w = build_workload("wan-2.1-14b", offload="group-leaf", **kw)
    seq = build_workload("wan-2.1-14b", offload="sequential", **kw)
    steps = 50
    t_step = 3.0  # seconds of GPU work a step, longer than a forward's copy
    group, why = _offload_seconds(w, hw, steps, t_step)
    streamed, _ = _offload_seconds(seq, hw, steps, t_step)
    den = component_sizes(w)[w.diffusion_spec.denoiser]
    others = sum(component_sizes(w).values()) - den
    assert "CUDA streams" in why
    # sequential: every forward's copies on the critical path; group: only the first group's
    # of each forward and the once-per-image components
    assert streamed >= 100 * den / 25e9
    assert group < others / 25e9 + 100 * den / 25e9 / 10
    assert group < streamed / 10


def test_copies_longer_than_the_compute_show_by_the_difference():
    hw = hardware(get_gpu("rtx-4090"))  # PCIe 4: 25 GB/s
    w = build_workload("flux.1-dev", task="image", offload="group")
    den = component_sizes(w)[w.diffusion_spec.denoiser]
    copy = den / 25e9
    short, _ = _offload_seconds(w, hw, 28, 0.1)
    long, _ = _offload_seconds(w, hw, 28, 0.4)
    assert short - long == pytest.approx(28 * 0.3, rel=1e-6)  # each forward: copy - compute
    assert copy > 0.4


@pytest.mark.parametrize("mode", ["group", "group-leaf"])
def test_group_is_faster_than_sequential_and_slower_than_resident(mode):
    kw = {"task": "image"}
    _, none = _run("flux.1-dev", "h100-sxm", "gpu-only", **kw)
    _, grp = _run("flux.1-dev", "h100-sxm", mode, **kw)
    _, seq = _run("flux.1-dev", "h100-sxm", "sequential", **kw)
    assert _seconds(none) < _seconds(grp) < _seconds(seq)
    assert any("enable_group_offload" in str(a) for a in grp.assumptions)


@pytest.mark.parametrize(("model", "kw"), [
    ("flux.1-dev", {"task": "image", "engine": "comfyui"}),  # ComfyUI has its own management
    ("flux.1-dev", {"task": "image-lora"}),  # training: block swap is the trainers' way
    ("llama-3.1-8b", {"task": "inference"}),
])
def test_group_offload_is_refused_outside_diffusers_inference(model, kw):
    with pytest.raises(InputError, match="offload group"):
        estimate_memory(build_workload(model, offload="group", **kw))


def test_a_run_streamed_by_sequential_offload_says_what_group_offload_would_take():
    gpu = get_gpu("rtx-4090")
    seq = estimate_speed(build_workload("flux.1-dev", task="image", offload="sequential"), gpu)
    grp = estimate_speed(build_workload("flux.1-dev", task="image", offload="group"), gpu)
    said = [a for a in seq.assumptions if "enable_group_offload" in str(a)]
    assert len(said) == 1
    assert f"about {grp.times['seconds_per_image'].typical:,.0f} s instead of " \
        f"{seq.times['seconds_per_image'].typical:,.0f} s" in said[0]
    # nothing to say where nothing streams, or where the engine is not diffusers
    resident = estimate_speed(build_workload("flux.1-dev", task="image"), get_gpu("h100-sxm"))
    comfy = estimate_speed(build_workload("flux.1-dev", task="image", engine="comfyui",
                                          offload="sequential"), gpu)
    for est in (resident, comfy, grp):
        assert not any("enable_group_offload" in str(a) and "instead of" in str(a)
                       for a in est.assumptions)


def test_the_step_rate_includes_the_copies_made_every_step():
    # a progress bar's it/s under sequential offload counts the weights streamed each step;
    # group offload shows only what the compute does not hide; model offload moves once
    gpu = get_gpu("l40")  # PCIe 4: 25 GB/s
    rate = {m: estimate_speed(build_workload("flux.1-dev", task="image", offload=m),
                              gpu).rates["it_per_s"].typical
            for m in ("gpu-only", "model", "sequential", "group-leaf")}
    w = build_workload("flux.1-dev", task="image", offload="sequential")
    den = component_sizes(w)[w.diffusion_spec.denoiser]
    assert 1 / rate["sequential"] - 1 / rate["gpu-only"] == pytest.approx(den / 25e9, rel=0.01)
    assert rate["model"] == pytest.approx(rate["gpu-only"])
    assert rate["sequential"] < rate["group-leaf"] < rate["gpu-only"]
