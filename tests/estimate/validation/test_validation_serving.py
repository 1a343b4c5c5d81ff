"""Serving validation phenomena that must not come back (issue 18's TTFT under load)."""

import csv

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.speed.serving_engine import engine_config
from whichgpu.estimate.validation import default_path
from whichgpu.estimate.validation import serving as vs
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _rows(prefix: str) -> list[dict[str, str]]:
    with default_path("serving").open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["id"].startswith(prefix)]


def test_multi_step_scheduling_makes_an_arrival_wait_out_a_group_of_steps():
    """vLLM 0.6's --num-scheduler-steps k admits new requests only between groups of k decode
    steps: the wait for the step under way is k times longer, TPOT is not changed."""
    w = Workload(resolve_model("llama-3.1-8b", offline=True), engine="vllm",
                 prompt_tokens=220, output_tokens=200)
    gpu = get_gpu("a100-80gb-sxm")
    cfg = engine_config(w, gpu, version="vLLM 0.6.0")
    one = ServingModel(w, gpu, config=cfg, lengths="mean").at_rate(4.0)
    ten = ServingModel(w, gpu, config=cfg.with_(multi_step=10), lengths="mean").at_rate(4.0)
    assert ten.tpot_s == pytest.approx(one.tpot_s)
    assert ten.ttft_parts["step under way"] == pytest.approx(
        10 * one.ttft_parts["step under way"], rel=1e-6)
    assert ten.ttft_s > one.ttft_s


def test_vllm_060_ttft_rows_with_ten_scheduler_steps_are_not_half_the_measurement():
    """SGLang's reproduction of the vLLM 0.6.0 benchmark (--num-scheduler-steps 10, Poisson
    arrivals at 4 and 8 requests/s): the model said about half the measured median TTFT
    (-50 to -72 %) while a new request waited out one decode step instead of ten."""
    rows = [r for r in _rows("srv-sglvllm060-") if "-vllm-" in r["id"]
            and r["metric"].startswith("ttft")]
    assert len(rows) == 4
    for o in vs.evaluate_rows(rows):
        assert o.error is not None and abs(o.error) < 0.35, (o.id, o.error)
