"""Issue 27: a serving replica remembers its closed-loop answers (``at_concurrency`` by users,
run length and utilisation): a recommendation asks every replica the same loop again (spot and
on-demand, the changes tried, the next answer). The remembered answer is the one a fresh
replica computes; off with the memos (the reference path)."""

from __future__ import annotations

from specs import LLAMA_31_8B
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload


def _served(batch: int, lengths: str = "fixed", **settings) -> ServingModel:
    w = Workload(LLAMA_31_8B, engine="vllm", batch=batch, prompt_tokens=1000,
                 output_tokens=200, **settings)
    return ServingModel(w, get_gpu("l40s"), lengths=lengths)  # type: ignore[arg-type]


def test_each_copy_of_a_replica_answers_a_closed_loop_once() -> None:
    first = _served(4).at_concurrency(24)
    again = _served(16).at_concurrency(24)  # another workload copy, the same replica
    assert again is first
    assert _served(4).at_concurrency(24, 500) is not first  # a finite run: another answer
    assert _served(4).at_concurrency(24, utilisation=False) is not first


def test_the_remembered_answer_is_a_fresh_replicas_to_the_last_bit() -> None:
    for lengths in ("fixed", "mean"):  # waves of fixed lengths; the regula falsi loop
        for users, requests in ((1, None), (24, None), (24, 500), (300, None)):
            got = _served(8, lengths).at_concurrency(users, requests)
            with memo.reference():
                fresh = _served(8, lengths)
                want = fresh.at_concurrency(users, requests)
                assert fresh.at_concurrency(users, requests) is not want  # memos off
            assert got == want
