"""Diffusion over several GPUs (tensor, Ulysses sequence and CFG parallel) and the engine's
own way to fit a pipeline on a card too small for it."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import speed_answer
from whichgpu.catalog.gpus import default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.diffusion_parallel import diffusion_layout
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.diffusion import component_sizes
from whichgpu.estimate.speed import DoesNotFit, estimate_speed
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def gpu(gpu_id: str):
    return default_catalog().get(gpu_id)


def image(alias: str, **kw) -> Workload:
    return Workload(model=resolve_model(alias), task="image", **kw)


def term(w: Workload, name: str) -> int:
    return next(t.bytes for t in estimate_memory(w).terms if t.name == name)


def test_flux2_dev_on_two_h100_fits_with_tensor_parallel():
    w = image("flux.2-dev")
    with pytest.raises(DoesNotFit):  # one whole pipeline per GPU, as diffusers runs it
        estimate_speed(w.with_(engine="diffusers", offload="gpu-only"), gpu("h100-sxm"), 2)
    est = estimate_speed(w, gpu("h100-sxm"), 2)
    assert est.engine == "sglang"
    assert est.scalars["layout_tp"] == 2
    assert any("tensor parallelism" in str(a) for a in est.assumptions)
    split = estimate_memory(w.with_(engine="sglang", gpus=2, tp=2)).total_bytes
    assert split <= gpu("h100-sxm").usable_memory_bytes


def test_weights_shrink_with_tensor_parallel_not_with_sequence_parallel():
    w = image("flux.1-dev", engine="sglang")
    sizes = component_sizes(w)
    d = w.diffusion_spec
    encoders = sum(v for k, v in sizes.items() if k != d.denoiser and "vae" not in k)
    one = term(w, "weights")
    sp2 = term(w.with_(gpus=2), "weights")  # Ulysses over 2: the DiT replicated
    tp2 = term(w.with_(gpus=2, tp=2), "weights")
    assert diffusion_layout(w.with_(gpus=2)).sp == 2
    # sequence parallel saves only the text encoders folded over the idle GPU
    assert one - sp2 <= encoders / 2 + 8
    assert one - tp2 >= sizes[d.denoiser] / 2 - 8
    # activations shrink with both
    def act(x: Workload) -> int:
        return estimate_memory(x).details["denoiser_activation_bytes"]

    assert act(w.with_(gpus=2)) == pytest.approx(act(w) / 2, rel=0.01)
    assert act(w.with_(gpus=2, tp=2)) == pytest.approx(act(w) / 2, rel=0.01)


def test_diffusers_keeps_one_pipeline_per_gpu_and_refuses_tp():
    w = image("flux.1-dev", engine="diffusers", offload="gpu-only")
    assert term(w.with_(gpus=2), "weights") == term(w, "weights")
    with pytest.raises(InputError):
        estimate_memory(w.with_(gpus=2, tp=2))


def test_speed_scales_more_over_nvlink_than_over_pcie():
    w = image("flux.1-dev", engine="sglang")
    sxm, pcie = gpu("h100-sxm"), gpu("h100-pcie")
    assert hardware(sxm, 4).link.kind == "nvlink"
    assert hardware(pcie, 4).link.kind != "nvlink"

    # compiled: an eager 1024px FLUX step on 4 GPUs waits on the host issuing it (xDiT
    # measured; tests/estimate/test_diffusion_eager_host_floor.py), whatever the link
    def speedup(g) -> float:
        one = estimate_speed(w, g, 1, compile=True).times["seconds_per_image"].typical
        four = estimate_speed(w.with_(gpus=4), g, 4,
                              compile=True).times["seconds_per_image"].typical
        return one / four

    assert speedup(sxm) > 1.5
    assert speedup(sxm) > speedup(pcie)


def test_cfg_parallel_puts_one_branch_on_each_gpu():
    w = image("qwen-image", engine="sglang")
    assert w.cfg_passes == 2
    assert diffusion_layout(w.with_(gpus=2)).cfg == 2
    g = gpu("h200-sxm")
    one = estimate_speed(w, g, 1).components[0].seconds
    two = estimate_speed(w.with_(gpus=2), g, 2).components[0].seconds
    assert two < 0.6 * one  # the denoising half, plus one all-gather per step


def test_flux_fp8_on_a_4090_gets_a_speed_with_the_offload_named():
    w = image("flux.1-dev", quant="fp8")
    ans = speed_answer(w, gpu("rtx-4090"))
    assert ans.estimate is not None, ans.not_fit
    said = " ".join(str(a) for a in ans.estimate.assumptions)
    assert "model CPU offload" in said
    transfers = {c.name: c.seconds for c in ans.estimate.components}["CPU offload transfers"]
    assert transfers > 0
    assert 5 < ans.estimate.times["seconds_per_image"].typical < 120


def test_comfyui_streams_only_what_does_not_fit():
    # FLUX.1-dev in bf16 does not fit an RTX 4080 (16 GB) even one model at a time: ComfyUI
    # loads part of it and streams the rest, fewer bytes per step than diffusers' sequential
    # offload moves
    w = image("flux.1-dev")
    g = gpu("rtx-4080")
    comfy = estimate_speed(w.with_(engine="comfyui"), g)
    diffusers = estimate_speed(w.with_(engine="diffusers"), g)
    said = " ".join(str(a) for a in comfy.assumptions)
    assert "ComfyUI loads the diffusion model partly" in said
    moved = {c.name: c.seconds for c in comfy.components}["CPU offload transfers"]
    streamed = {c.name: c.seconds for c in diffusers.components}["CPU offload transfers"]
    assert 0 < moved < streamed


def test_recommend_offers_flux2_dev_on_two_h100_split_by_tensor_parallel(cli):
    r = cli("recommend", "flux.2-dev", "--task", "image", "--images", "100", "--only",
            "h100-sxm", "--max-gpus", "2", "--json")
    assert r.code == 0, r.err
    two = next(o for o in r.json()["options"] if o["count"] == 2)
    assert two["layout"] == "tp=2"
    assert any("tensor parallelism" in n for n in two["notes"])
    one = next(o for o in r.json()["options"] if o["count"] == 1)
    assert two["rate"]["typical"] > 1.5 * one["rate"]["typical"]  # no offload, two GPUs


@pytest.mark.parametrize(("engine", "quant", "gpu_id", "said"), [
    ("diffusers", None, "h100-sxm", "whole pipeline resident"),
    ("diffusers", "fp8", "rtx-4090", "model CPU offload"),
    ("diffusers", None, "rtx-4090", "sequential CPU offload"),
    ("comfyui", None, "rtx-4090", "ComfyUI's default model management"),
])
def test_every_image_speed_names_the_memory_management(engine, quant, gpu_id, said):
    est = estimate_speed(image("flux.1-dev", engine=engine, quant=quant), gpu(gpu_id))
    memory = [str(a) for a in est.assumptions if str(a).startswith("memory:")]
    assert memory and said in memory[0]


def test_memory_on_two_h100_splits_flux2_as_the_speed_answer_does():
    from whichgpu.estimate.memory.report import memory_report

    w = image("flux.2-dev", gpus=2)
    report = memory_report(w, gpu("h100-sxm"))
    assert report.target is not None and report.target.fits
    assert report.estimate.engine == "sglang"
    assert any("tensor parallelism" in str(n) for n in report.notes)
    # a named engine is kept as asked: diffusers does not split, so it does not fit
    named = memory_report(w.with_(engine="diffusers"), gpu("h100-sxm"))
    assert named.target is not None and not named.target.fits


def test_sglang_without_tp_takes_the_split_that_fits():
    from whichgpu.estimate.memory.report import memory_report

    w = image("flux.2-dev", gpus=2, engine="sglang")  # Ulysses alone replicates the weights
    assert estimate_memory(w).total_bytes > gpu("h100-sxm").usable_memory_bytes
    report = memory_report(w, gpu("h100-sxm"))
    assert report.target is not None and report.target.fits
    assert report.estimate.details["layout"]["tp"] == 2


def test_a_diffusion_model_without_a_task_is_asked_as_generation():
    from whichgpu.answers.inputs.workload import build_workload

    w = build_workload("flux.1-dev", quant="fp8")  # as 'speed flux.1-dev --quant fp8' asks
    assert w.task == "image" and any("task image assumed" in str(n) for n in w.notes)
    est = estimate_speed(w, gpu("rtx-4090"))  # the engine's own memory management: a speed
    assert est.times["seconds_per_image"].typical > 0
    assert build_workload("wan2.2-t2v-a14b").task == "video"
