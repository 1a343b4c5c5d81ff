"""A diffusion pipeline split over GPUs (diffusers' context parallelism for a video, SGLang's
tensor and sequence parallelism) runs its all-to-alls over the machine's link, so its GPUs are
priced as one machine: the answer once put a Wan 2.2 video split ulysses=2 on "2 separate
1-GPU machines ... nothing links them", and priced it so."""

from __future__ import annotations

from whichgpu.advise.machines import linked_gpus
from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.units import Money


def _video():
    return build_workload("wan2.2-t2v-a14b", task="video")


def test_a_split_pipeline_is_linked_and_independent_pipelines_are_not():
    video = _video()
    assert linked_gpus(video, 2) == 2  # diffusers: one video's tokens over both GPUs
    assert linked_gpus(video.with_(engine="comfyui"), 2) == 1  # one instance per GPU
    assert linked_gpus(build_workload("flux.1-dev", task="image"), 4) == 1
    assert linked_gpus(build_workload("llama-3.1-8b"), 4) == 4


def test_a_split_video_is_never_priced_on_machines_with_nothing_between_them():
    # 1-GPU machines sold as such (an instance type) and one 2-GPU machine
    offers = [Offer(provider="p", gpu="h100-sxm", instance_type="1x", price_per_hour=Money(
                  2.0, "USD")),
              Offer(provider="p", gpu="h100-sxm", gpu_count=2, instance_type="2x",
                    price_per_hour=Money(4.0, "USD"))]
    rec = recommend(build_job(_video(), videos="100"), offers, gpus=[get_gpu("h100-sxm")])
    split = [o for o in rec.options if o.gpus > 1]
    assert split, "the 2-GPU machine runs the split"
    for o in split:
        data = o.to_json()
        assert data["linked_gpus"] == o.gpus and data["machines"] == 1, data["shape"]
        assert o.offer.gpu_count >= o.gpus
