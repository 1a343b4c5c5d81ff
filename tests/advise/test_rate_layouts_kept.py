"""A request-rate recommendation keeps each layout and its searched max rate across answers
(advise/serving.py ``_unsized``, ``_sized``: they depend on the workload, the GPU, tp and the
latency targets, not on the rate): a question that differs only in its rate searches only
the layouts the first one skipped (a layout priced out is not searched, and which are depends
on the rate), and its answer equals the reference path's (memos off), mean and percentile
targets alike."""

import pytest

from answer_set import answer, environment
from whichgpu.advise import serving
from whichgpu.estimate import memo

BASE = {"model": "llama-3.1-8b", "engine": "vllm", "prompt_tokens": 1000,
        "output_tokens": 200, "only": "h100-sxm,l40s,a10g,rtx-4090", "top": 0}


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("targets", [{"ttft": "2s", "tpot": "50ms"},
                                     {"ttft": "2s@p95", "tpot": "60ms@p90"}])
def test_another_rate_searches_no_max_rate_again(targets: dict,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[float] = []
    real = serving.max_rate

    def counted(sm, t):
        got = real(sm, t)
        searched.append(got)
        return got

    monkeypatch.setattr(serving, "max_rate", counted)
    first = answer("recommend", {**BASE, **targets, "requests_per_s": "20"})
    assert searched and first["options"]  # the first question searches its layouts
    at_first = len(searched)
    searched.clear()
    fast = answer("recommend", {**BASE, **targets, "requests_per_s": "33"})
    again = len(searched)
    searched.clear()
    with memo.reference():
        slow = answer("recommend", {**BASE, **targets, "requests_per_s": "33"})
    assert again < len(searched) and again < at_first  # the same layouts are not searched
    assert fast == slow
    assert fast != first  # another rate, another answer (more replicas)
