"""Image and video set-ups people run (issue 29's "Done when": no false 'does not fit' for a
multi-GPU diffusion set-up people run; every image or video question gets a speed with the
engine's default memory management named, in that engine's own words).

Each set-up goes through the answer layer as the CLI's ``speed`` asks it (no offload, tiling
or split named unless the people who run it name one). The 8 GB rows use the RTX 3070 (8 GB),
the catalog's 8 GB card of the class of an RTX 4060 (which the catalog does not list).
"""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload, speed_answer
from whichgpu.catalog.gpus import get_gpu

# (model, settings, gpu, count, the words the memory management must be said in)
SETUPS = [
    # SGLang's FLUX.2-dev example: tensor parallel over 2 x H100, well inside each card
    ("flux.2-dev", {"task": "image", "engine": "sglang", "tp": 2}, "h100-sxm", 2,
     "whole pipeline resident"),
    # the same on 2 x H100 with no engine named: split, not refused
    ("flux.2-dev", {"task": "image"}, "h100-sxm", 2, "whole pipeline resident"),
    ("flux.2-dev", {"task": "image", "engine": "comfyui", "quant": "fp8"}, "rtx-4090", 1,
     "ComfyUI"),
    # Wan 2.2 A14B: 1, 2 and 8 GPUs (the repository's 8-GPU Ulysses run)
    ("wan-2.2-14b", {"task": "video", "resolution": "1280x720", "frames": 81}, "h200", 1,
     "whole pipeline resident"),
    ("wan-2.2-14b", {"task": "video", "resolution": "1280x720", "frames": 81}, "h100-sxm", 2,
     "whole pipeline resident"),
    ("wan-2.2-14b", {"task": "video", "resolution": "1280x720", "frames": 81,
                     "engine": "sglang"}, "h100-sxm", 8, "whole pipeline resident"),
    ("wan-2.2-14b", {"task": "video", "resolution": "832x480", "frames": 81,
                     "engine": "comfyui", "quant": "fp8"}, "rtx-4090", 1, "ComfyUI"),
    # HunyuanVideo: one H100 at 720p (diffusers), a 4090 in ComfyUI, 8 x H100 in SGLang
    ("hunyuanvideo", {"task": "video", "resolution": "1280x720", "frames": 129}, "h100-sxm",
     1, "model CPU offload"),
    ("hunyuanvideo", {"task": "video", "resolution": "848x480", "frames": 61,
                      "engine": "comfyui", "quant": "fp8"}, "rtx-4090", 1, "ComfyUI"),
    ("hunyuanvideo", {"task": "video", "resolution": "1280x720", "frames": 129,
                      "engine": "sglang"}, "h100-sxm", 8, "whole pipeline resident"),
    # Qwen-Image: an H100 in diffusers, a 4090 and an 8 GB card in ComfyUI
    ("qwen-image", {"task": "image"}, "h100-sxm", 1, "whole pipeline resident"),
    ("qwen-image", {"task": "image", "engine": "comfyui", "quant": "fp8"}, "rtx-4090", 1,
     "ComfyUI"),
    ("qwen-image", {"task": "image", "engine": "comfyui", "quant": "fp8"}, "rtx-3070", 1,
     "ComfyUI"),
    # SD 3.5 with diffusers' and ComfyUI's defaults on a 4090, a 3090 and an 8 GB card
    ("sd-3.5-large", {"task": "image"}, "rtx-4090", 1, "model CPU offload"),
    ("sd-3.5-large", {"task": "image"}, "rtx-3090", 1, "model CPU offload"),
    ("sd-3.5-large", {"task": "image", "engine": "comfyui"}, "rtx-3070", 1, "ComfyUI"),
    ("sd-3.5-medium", {"task": "image"}, "rtx-3070", 1, "sequential CPU offload"),
    ("sd-3.5-medium", {"task": "image", "engine": "comfyui"}, "rtx-3070", 1, "ComfyUI"),
    # LTX-Video 2B on an 8 GB card (refused before its VAE's own working set)
    ("ltx-video", {"task": "video"}, "rtx-3070", 1, "sequential CPU offload"),
    ("ltx-video", {"task": "video", "engine": "comfyui"}, "rtx-3070", 1, "ComfyUI"),
]


@pytest.mark.parametrize(("model", "settings", "gpu_id", "count", "said"), SETUPS,
                         ids=[f"{m}-{s.get('engine', 'default')}-{g}x{c}"
                              for m, s, g, c, _ in SETUPS])
def test_a_setup_people_run_gets_a_speed_and_its_memory_management(model, settings, gpu_id,
                                                                   count, said):
    w = build_workload(model, gpus=count, **settings)
    ans = speed_answer(w, get_gpu(gpu_id), count)
    assert ans.estimate is not None, ans.not_fit
    rate = ans.estimate.rates["it_per_s"].typical
    assert rate > 0
    memory = [str(a) for a in ans.estimate.assumptions if str(a).startswith("memory:")]
    assert memory and said in memory[0], memory
    if settings.get("engine") == "comfyui":  # never in diffusers' words
        assert "diffusers" not in memory[0] and "enable_" not in memory[0]


@pytest.mark.parametrize(("model", "extra", "gpu_id"), [
    ("flux.2-dev", ("--task", "image", "--images", "10", "--quant", "fp8"), "rtx-4090"),
    ("hunyuanvideo", ("--task", "video", "--videos", "2", "--resolution", "848x480",
                      "--frames", "61"), "rtx-4090"),
    ("sd-3.5-large", ("--task", "image", "--images", "10"), "rtx-3070"),
])
def test_recommend_offers_the_single_card_comfyui_streams_onto(cli, model, extra, gpu_id):
    """ComfyUI loads part of a model that does not fit and streams the rest by itself: the
    recommender excluded these cards as too small while ``speed`` answered for them."""
    r = cli("recommend", model, *extra, "--engine", "comfyui", "--only", gpu_id,
            "--max-gpus", "1", "--json")
    assert r.code == 0, r.err
    options = r.json()["options"]
    assert [o["count"] for o in options] == [1], r.json()["excluded"]
    said = " ".join(str(n) for n in options[0]["notes"])
    assert "ComfyUI's partial loading" in said and "--offload" not in said and "--vae" not in said


def test_comfyui_runs_one_video_per_gpu_and_diffusers_splits_one():
    """A ComfyUI instance runs on one device (comfy/cli_args.py --cuda-device: 'Set the id of
    the cuda device this instance will use'): eight GPUs are eight instances, one video each,
    not one video split eight ways (which diffusers' context parallelism does)."""
    from whichgpu.estimate.diffusion_parallel import diffusion_layout

    settings = {"task": "video", "resolution": "832x480", "frames": 81, "quant": "fp8",
                "gpus": 8}
    comfy = diffusion_layout(build_workload("wan-2.2-14b", engine="comfyui", **settings))
    diffusers = diffusion_layout(build_workload("wan-2.2-14b", engine="diffusers", **settings))
    assert (comfy.replicas, comfy.sp) == (8, 1)
    assert (diffusers.replicas, diffusers.sp) == (1, 8)
    one = speed_answer(build_workload("wan-2.2-14b", engine="comfyui", **{**settings, "gpus": 1}),
                       get_gpu("rtx-4090"), 1).estimate
    eight = speed_answer(build_workload("wan-2.2-14b", engine="comfyui", **settings),
                         get_gpu("rtx-4090"), 8).estimate
    assert one is not None and eight is not None
    # each video takes as long as on one card; eight are made at once
    assert eight.times["seconds_per_video"].typical == one.times["seconds_per_video"].typical
    assert eight.rates["videos_per_hour"].typical == pytest.approx(
        8 * one.rates["videos_per_hour"].typical)
    said = " ".join(str(a) for a in eight.assumptions)
    assert "layout: one pipeline per GPU (8 at a time)" in said


def test_recommend_shares_the_videos_out_over_comfyui_instances(cli):
    r = cli("recommend", "wan-2.2-14b", "--task", "video", "--videos", "16", "--resolution",
            "832x480", "--frames", "81", "--quant", "fp8", "--engine", "comfyui", "--only",
            "rtx-4090", "--json")
    assert r.code == 0, r.err
    by_count = {o["count"]: o for o in r.json()["options"]}
    one, eight = by_count[1], by_count[8]
    assert eight["layout"] == "8 independent pipelines"
    assert eight["rate"]["typical"] == one["rate"]["typical"]  # seconds a video, each card
    assert eight["time_s"]["typical"] == pytest.approx(one["time_s"]["typical"] / 8)
