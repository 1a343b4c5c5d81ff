"""Sizing for a request rate skips the layouts that cannot be a GPU's cheapest (advise/serving.py
``_cost_floor``: priced at the fewest replicas they could need) without sizing them, and a
bigger layout whose single replica already costs more than the GPU's cheapest option without
even building it (``_one_replica_floor``); the answers are the same as when every layout is
built, sized and priced."""

from __future__ import annotations

import pytest

from answer_set import answer, environment
from whichgpu.advise import serving
from whichgpu.estimate import memo

# on-demand rate questions whose GPUs have several layouts that meet the targets: mean
# targets, none (the utilisation cap), a GPU limit, another currency, a shipped offer set,
# the latency objective (layouts still chosen by cost)
CATALOG = {"model": "llama-3.1-8b", "engine": "vllm", "requests_per_s": "20",
           "prompt_tokens": 1000, "output_tokens": 200, "ttft": "2s", "tpot": "50ms",
           "top": 0}  # tests/answer_set.py's 8b-rate-20, over the whole catalog
QUESTIONS = {
    "70b-rate-3-tpot": {"model": "llama-3.1-70b", "engine": "vllm", "requests_per_s": "3",
                        "prompt_tokens": 2000, "output_tokens": 300, "tpot": "40ms",
                        "only": "h100-sxm,l40s,h200-sxm", "top": 0},
    "8b-rate-50-no-target": {"model": "llama-3.1-8b", "engine": "sglang",
                             "requests_per_s": "50", "only": "h100-sxm,l4,rtx-4090,a10g,"
                             "a100-80gb-sxm", "top": 0},
    "8b-rate-40-max-gpus-eur": {"model": "llama-3.1-8b", "engine": "vllm",
                                "requests_per_s": "40", "ttft": "1s", "max_gpus": 4,
                                "currency": "EUR", "only": "h100-sxm,l40s,rtx-4090,l4",
                                "top": 0},
    # benchmarks/recommend_time.py's CLI question (no target), where b200, h200-sxm and
    # rtx-6000-ada serve 20 requests/s on one GPU: their 2-8 GPU layouts are not built
    "8b-rate-20-no-target-few": {"model": "llama-3.1-8b", "engine": "vllm",
                                 "requests_per_s": "20", "prompt_tokens": 1000,
                                 "output_tokens": 200,
                                 "only": "b200,h200-sxm,rtx-6000-ada,a10,l4", "top": 0},
    "8b-rate-10-time": {"model": "llama-3.1-8b", "engine": "trtllm", "requests_per_s": "10",
                        "tpot": "30ms", "objective": "time",
                        "only": "h100-sxm,a100-80gb-sxm,rtx-4090", "top": 0},
}


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_skipping_layouts_changes_no_answer(name: str, monkeypatch) -> None:
    sized: list[int] = []
    real = serving._sized

    def counted(lay, targets):
        if lay.max_rate == serving._UNSIZED:
            sized.append(lay.tp)
        return real(lay, targets)

    monkeypatch.setattr(serving, "_sized", counted)
    fast = answer("recommend", QUESTIONS[name])
    skipped_sizing = len(sized)
    sized.clear()
    monkeypatch.setattr(serving, "_BOUND", [False])
    every = answer("recommend", QUESTIONS[name])
    assert fast == every
    assert fast["options"]
    assert skipped_sizing < len(sized)  # each question here has a layout to skip


def test_the_whole_catalog_answer_is_the_same_with_fewer_searches(monkeypatch) -> None:
    """Not a speed test: the bound is what makes the rate answer do less (8b at 20 requests/s:
    75 of 253 max-rate searches skipped, 2026-12-07; and 71 of 328 layouts not built, each a
    serving model and its max throughput)."""
    searched: list[int] = []
    built: list[tuple[str, int]] = []
    real, build = serving.max_rate, serving._unsized_worked_out

    def counted(sm, targets):
        searched.append(1)
        return real(sm, targets)

    def built_counted(w, gpu, tp, targets, profile):
        built.append((gpu.id, tp))
        return build(w, gpu, tp, targets, profile)

    monkeypatch.setattr(serving, "max_rate", counted)
    monkeypatch.setattr(serving, "_unsized_worked_out", built_counted)
    memo.clear()  # each answer searches from scratch (layouts are kept across answers)
    fast = answer("recommend", CATALOG)
    with_bound, built_with_bound = len(searched), set(built)
    searched.clear()
    built.clear()
    monkeypatch.setattr(serving, "_BOUND", [False])
    memo.clear()
    assert answer("recommend", CATALOG) == fast
    assert with_bound < len(searched) * 0.85
    assert len(built_with_bound) < len(built) * 0.9
    # what is not built is a bigger layout of a GPU priced on fewer GPUs per replica
    assert all(tp > 1 for _, tp in set(built) - built_with_bound)
