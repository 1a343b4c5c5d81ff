"""A GPU that meets serving targets one request at a time but at no request rate once requests
share it (its searched max rate is 0) is excluded with that reason, priced or not. Sizing such
a GPU once divided the asked rate by that zero: `whichgpu recommend llama-3.1-8b
--requests-per-s 12 --prompt-tokens 2000 --output-tokens 300 --ttft 1s@p95 --tpot 45ms@p95
--engine vllm` stopped with an internal error (ZeroDivisionError) on the Apple M4 Pro.

Since the mean model counts whole prompts per step (tails9), that Apple case meets the targets
at a small rate, and a card the named engine cannot run is excluded for that (its options once
asked the speed model, which refused the engine with a traceback). The zero max rate is now set
directly (the percentile search made to find none), on a card vLLM runs."""

from __future__ import annotations

import pytest

import whichgpu.advise.serving as serving
from whichgpu.advise.job import Job
from whichgpu.advise.recommend import recommend_for_rate
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.estimate import memo
from whichgpu.units import Money


def _job() -> Job:
    w = build_workload("llama-3.1-8b", engine="vllm", prompt_tokens=2000, output_tokens=300)
    return Job(w, requests_per_s=12.0, ttft_s=1.0, tpot_s=0.045, ttft_pct=95, tpot_pct=95)


def _offers(gpu: str, priced: bool) -> list[Offer]:
    return [Offer(provider="p", gpu=gpu, gpu_count=n, price_per_hour=Money(2.0 * n, "USD"))
            for n in (1, 2, 4, 8)] if priced else []


@pytest.mark.parametrize("priced", [False, True])
def test_met_idle_never_under_load_is_an_exclusion(priced: bool, monkeypatch) -> None:
    gpu = "l40s"
    monkeypatch.setattr(serving, "max_rate_percentile", lambda sm, targets, mean_rate: 0.0)
    with memo.reference():  # no layout sized with the patched search is kept
        rec = recommend_for_rate(_job(), _offers(gpu, priced), gpus=[get_gpu(gpu)])
    assert rec.options == []
    reasons = [str(e.reason) for e in rec.excluded if e.gpu.id == gpu]
    assert any("not at their percentile once requests share the GPU" in r for r in reasons), \
        reasons


@pytest.mark.parametrize("priced", [False, True])
def test_a_card_the_named_engine_cannot_run_is_excluded_for_it(priced: bool) -> None:
    gpu = "apple-m4-pro"
    rec = recommend_for_rate(_job(), _offers(gpu, priced), gpus=[get_gpu(gpu)])
    assert rec.options == []
    reasons = [str(e.reason) for e in rec.excluded if e.gpu.id == gpu]
    assert any("vLLM does not run on Apple silicon" in r for r in reasons), reasons
