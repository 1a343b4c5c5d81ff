"""Video diffusion: attention over the video's tokens is the dominant, quadratic cost, and the
answer says so."""

from __future__ import annotations

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.speed import estimate_speed


def video(frames: int, resolution: str = "1280x720"):
    return build_workload("wan2.2-t2v-a14b", task="video", frames=frames, resolution=resolution)


def said_attention(est) -> str | None:
    return next((str(a) for a in est.assumptions if str(a).startswith("attention over")), None)


def test_attention_dominates_a_720p_video_and_the_answer_says_so():
    h200 = default_catalog().get("h200-sxm")
    est = estimate_speed(video(81), h200, check_fit=False)
    said = said_attention(est)
    assert said is not None and "75,600 tokens" in said


def test_video_time_grows_faster_than_its_frames():
    h200 = default_catalog().get("h200-sxm")
    short = estimate_speed(video(41), h200, check_fit=False).times["seconds_per_video"].typical
    long = estimate_speed(video(81), h200, check_fit=False).times["seconds_per_video"].typical
    # twice the latent frames: linears x2, attention x4
    assert long / short > 2.3


def test_a_1024px_image_is_not_said_to_be_attention_bound():
    h100 = default_catalog().get("h100-sxm")
    est = estimate_speed(build_workload("flux.1-dev", task="image"), h100, check_fit=False)
    assert said_attention(est) is None
