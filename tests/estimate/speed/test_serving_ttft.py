"""Serving TTFT: the two mistakes behind the +1,300 % rows of issue 18's holdout, each tested
so that it cannot come back."""

import csv

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _rows():
    with default_path("serving").open(newline="", encoding="utf-8") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


def test_a_single_fixed_length_request_waits_for_its_whole_prefill():
    """k equal prompts that start together finish their prefill at 1/k, 2/k ... of it: the
    mean is (k + 1) / 2k of the fill, so one request alone waits for all of it (the model
    said half: a 16,000-token prompt of Qwen3-14B AWQ on an A100 came out 1.7 s against the
    3.4 s measured and the 3.4 s of the speed model's own prefill)."""
    w = Workload(resolve_model("Qwen/Qwen3-14B", offline=True), quant="awq", engine="vllm",
                 prompt_tokens=16000, output_tokens=200)
    sm = ServingModel(w, get_gpu("a100-80gb-sxm"), lengths="fixed")
    one = sm.at_concurrency(1, 30, utilisation=False)
    alone = estimate_speed(build_workload("Qwen/Qwen3-14B", quant="awq", engine="vllm",
                                          prompt_tokens="16000", output_tokens="200"),
                           get_gpu("a100-80gb-sxm"), saturation=False).times["ttft_s"].typical
    assert one.ttft_s == pytest.approx(alone, rel=0.05)
    # many prompts at once: about half the fill on average
    many = sm.at_concurrency(8, 64, utilisation=False)
    assert many.ttft_s < 8 * one.ttft_s * 0.6


def test_a_rate_with_a_max_concurrency_is_the_closed_loop_when_the_users_cannot_keep_up():
    """benchmark_serving --request-rate 1 --max-concurrency 1 with 16k-token prompts: the one
    in-flight request takes longer than a second, so later requests wait in the client, where
    TTFT does not count them. Read as an open Poisson stream, the replica was 'saturated' and
    the TTFT 48.6 s against 3.35 s measured (+1,352 %)."""
    row = _rows()["srv-vllmi20469-qwen3-14b-awq-a100-16000-200-c1-ttft-mean"]
    case = vs.case_of(row)
    assert case.load.kind == "rate" and case.users_cap == 1
    point = vs.answer(case)
    assert not point.saturated
    assert point.ttft_s * 1e3 == pytest.approx(float(row["value"]), rel=0.15)
