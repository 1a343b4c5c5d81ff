"""A GPU that meets serving targets one request at a time but at no request rate once requests
share it (its searched max rate is 0) is excluded with that reason, priced or not. Sizing such
a GPU once divided the asked rate by that zero: `whichgpu recommend llama-3.1-8b
--requests-per-s 12 --prompt-tokens 2000 --output-tokens 300 --ttft 1s@p95 --tpot 45ms@p95
--engine vllm` stopped with an internal error (ZeroDivisionError) on the Apple M4 Pro."""

from __future__ import annotations

import pytest

from whichgpu.advise.job import Job
from whichgpu.advise.recommend import recommend_for_rate
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.units import Money

GPU = "apple-m4-pro"


def _job() -> Job:
    w = build_workload("llama-3.1-8b", engine="vllm", prompt_tokens=2000, output_tokens=300)
    return Job(w, requests_per_s=12.0, ttft_s=1.0, tpot_s=0.045, ttft_pct=95, tpot_pct=95)


@pytest.mark.parametrize("priced", [False, True])
def test_met_idle_never_under_load_is_an_exclusion(priced: bool) -> None:
    offers = [Offer(provider="p", gpu=GPU, gpu_count=n, price_per_hour=Money(2.0 * n, "USD"))
              for n in (1, 2, 4, 8)] if priced else []
    rec = recommend_for_rate(_job(), offers, gpus=[get_gpu(GPU)])
    assert rec.options == []
    reasons = [str(e.reason) for e in rec.excluded if e.gpu.id == GPU]
    assert any("not at their percentile once requests share the GPU" in r for r in reasons), \
        reasons
