"""Issue 27: what a recommendation now computes once and reuses, and that the reuse changes
no number. A serving replica and a prefill are remembered by every setting but the batch
(a recommendation makes a workload copy per batch it tries); a serving option no longer
computes the speed at a batch it then throws away; "if it fit, it would win" asks for the
changes to the job once per GPU. The whole question set's answers are compared with the
record (and with the memos off) in tests/answers/test_answers_identical.py."""

from __future__ import annotations

import pytest

from answer_set import environment
from specs import LLAMA_31_8B
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import prefill_time
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.speed.serving_engine import engine_config
from whichgpu.estimate.workload import Workload


def _served(batch: int, **settings) -> Workload:
    return Workload(LLAMA_31_8B, engine="vllm", batch=batch, prompt_tokens=1000,
                    output_tokens=200, **settings)


def test_a_replica_is_built_once_for_every_batch() -> None:
    gpu = get_gpu("h100-sxm")
    four, sixteen = ServingModel(_served(4), gpu), ServingModel(_served(16), gpu)
    assert sixteen.steps is four.steps  # the step model (and its grid) shared
    assert sixteen.capacity is four.capacity and sixteen.limit == four.limit
    assert sixteen.max_throughput() is four.max_throughput()  # solved once
    assert sixteen.workload.batch == 16  # each copy keeps its own workload
    # another setting, another replica
    fp8 = ServingModel(_served(16, kv_dtype="fp8"), gpu)
    assert fp8.steps is not four.steps and fp8.limit > four.limit
    # the same card by another id is another GPU object: never mixed up
    assert ServingModel(_served(16), get_gpu("h100-pcie")).steps is not four.steps


def test_the_shared_replica_answers_as_a_fresh_one() -> None:
    gpu = get_gpu("l40s")
    shared = ServingModel(_served(8), gpu)
    ServingModel(_served(32), gpu).at_concurrency(32)  # fills the shared grid first
    with memo.reference():  # built from scratch, as before the memo
        fresh = ServingModel(_served(8), gpu)
        assert fresh.steps is not shared.steps
        want = fresh.at_concurrency(8), fresh.at_rate(2.0), fresh.max_throughput()
    got = shared.at_concurrency(8), shared.at_rate(2.0), shared.max_throughput()
    assert got == want  # every field, to the last bit


def test_an_engine_config_given_is_never_shared() -> None:
    gpu = get_gpu("h100-sxm")
    cfg = engine_config(_served(1), gpu)
    assert ServingModel(_served(4), gpu, config=cfg).steps is not \
        ServingModel(_served(8), gpu, config=cfg).steps


PROMPT = 8192


def test_a_prefill_is_remembered_by_every_setting_but_the_batch() -> None:
    """A long prompt, whose prefill is bound by the GPU's work: a short one on an H100 is bound
    by vLLM's per-layer dispatch, which no precision or split changes."""
    gpu = get_gpu("h100-sxm")
    one, other = hardware(gpu, 1), hardware(gpu, 1)  # equal views, different objects
    first = prefill_time(_served(4), one, 1, PROMPT)
    assert prefill_time(_served(64), other, 1, PROMPT) is first
    assert prefill_time(_served(4), one, 2, PROMPT) is not first  # the batch argument counts
    fp8 = prefill_time(_served(4, quant="fp8"), one, 1, PROMPT)
    assert fp8 is not first and fp8.seconds != first.seconds
    two = prefill_time(_served(4, tp=2, gpus=2), hardware(gpu, 2), 1, PROMPT)
    assert two is not first and two.seconds != first.seconds
    with memo.reference():
        again = prefill_time(_served(64), one, 1, PROMPT)
    assert again is not first and again.seconds == first.seconds
    assert again.parts == first.parts


@pytest.fixture
def _answers(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("_answers")
def test_a_serving_option_computes_no_speed_it_throws_away(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One user at 5 tokens/s: each size is priced at one sequence per replica; the speed at
    the most sequences that fit (computed for every size before) is never asked for."""
    import whichgpu.advise.evaluate as evaluate
    from whichgpu.answers import recommend as answer
    from whichgpu.answers.requests import Recommend

    batches: list[int] = []
    real = evaluate.estimate_speed

    def counted(w, gpu, count=1, **kwargs):
        batches.append(w.batch)
        return real(w, gpu, count, **kwargs)

    monkeypatch.setattr(evaluate, "estimate_speed", counted)
    rec = answer(Recommend(model="llama-3.1-8b", users=1, tokens_per_s_each=5,
                           only="h100-sxm,l40s", top=0)).to_json()
    assert rec["options"]
    assert all(o["batch"] == 1 for o in rec["options"])
    assert batches and set(batches) == {1}


@pytest.mark.usefixtures("_answers")
def test_the_changes_that_would_make_it_fit_are_asked_once_per_gpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import whichgpu.advise.explain as explain
    from whichgpu.answers import recommend as answer
    from whichgpu.answers.requests import Recommend

    asked: list[str] = []
    real = explain.suggestions

    def counted(w, gpu=None, **kwargs):
        asked.append(gpu.id)
        return real(w, gpu, **kwargs)

    monkeypatch.setattr(explain, "suggestions", counted)
    rec = answer(Recommend(model="llama-3.1-8b", tokens="10M", top=0))
    # a GPU excluded at two sizes (1 and 2 x rtx-3080-10gb) is among those tried
    tried = [(e.gpu.id, e.count) for e in rec.rec.excluded
             if e.kind == "memory" and e.has_offer]
    assert len({g for g, _ in tried}) < len(tried)
    assert asked and len(asked) == len(set(asked))
