"""Issue 27: the checklist's whole-catalog recommendation is computed once per question that
changes it. Hours per month and the horizon feed only rent-or-buy and the article's rules, so
checklist questions that differ only in them reuse the recommendation (a bounded memo keyed by
value on everything recommend() reads); a changed budget or price list computes it again, and
the answer is the one computed afresh with the memos off. The REST answers of the question set
are compared with the record in tests/answers/test_answers_identical.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from whichgpu.advise import recommend as recommend_module
from whichgpu.advise.checklist import ChecklistResult, run_checklist
from whichgpu.answers.inputs.checklist import parse_answers
from whichgpu.catalog.gpus import get_gpu
from whichgpu.catalog.prices.selection import get_offers
from whichgpu.estimate import memo
from whichgpu.units import Money

ARTICLE = get_offers("article-000")  # nine offers (S2), one per GPU
GPUS = [get_gpu(g) for g in ("rtx-4090", "a100-80gb-sxm", "h100-sxm")]


@pytest.fixture
def recommend_calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The jobs recommend() is called with, from here on (the memos emptied first)."""
    calls: list[Any] = []
    real = recommend_module.recommend

    def counting(job: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(job)
        return real(job, *args, **kwargs)

    monkeypatch.setattr(recommend_module, "recommend", counting)
    memo.clear()
    return calls


def _ask(hours: float, horizon: float, budget: str = "none", offers: Any = ARTICLE,
         gpus: Any = None, model: str = "llama-3.1-8b") -> ChecklistResult:
    answers = parse_answers("inference", model, budget, hours, horizon)
    return run_checklist(answers, list(offers), currency="USD", gpus=gpus)


def _json(result: ChecklistResult) -> str:
    return json.dumps(result.to_json(), sort_keys=True)


def test_other_hours_and_horizon_reuse_the_whole_catalog_recommendation(recommend_calls):
    first = _ask(50, 6)
    second = _ask(600, 36)
    assert len(recommend_calls) == 1  # the second question ran no recommendation
    # the answers still differ where hours and horizon count: the article's rules, rent-or-buy
    assert first.article_rules != second.article_rules
    assert first.advice.to_json() != second.advice.to_json()
    with memo.reference():  # the second answer computed afresh, memos off
        fresh = _ask(600, 36)
    assert len(recommend_calls) == 2
    assert _json(second) == _json(fresh)


def test_a_changed_budget_price_list_or_gpu_set_computes_again(recommend_calls):
    base = _ask(100, 12, gpus=GPUS)
    assert len(recommend_calls) == 1
    _ask(300, 24, gpus=GPUS)  # the same question, other hours: reused
    assert len(recommend_calls) == 1
    capped = _ask(100, 12, budget="1USD", gpus=GPUS)  # another budget
    assert len(recommend_calls) == 2
    assert all(o.price_per_hour.amount <= 1 for o in capped.recommendation.options)
    assert _json(capped) != _json(base)
    _ask(100, 12, gpus=GPUS[:2])  # fewer GPUs compared
    assert len(recommend_calls) == 3
    # the best card's offer three times dearer: the same question, another price list
    best = base.recommendation.best.gpu.id
    dearer = [o.model_copy(update={"price_per_hour": Money(o.price_per_hour.amount * 3, "USD")})
              if o.gpu == best else o for o in ARTICLE]
    repriced = _ask(100, 12, offers=dearer, gpus=GPUS)
    assert len(recommend_calls) == 4
    assert repriced.recommendation.best.gpu.id != best or \
        repriced.recommendation.best.price_per_hour != base.recommendation.best.price_per_hour
    with memo.reference():
        assert _json(repriced) == _json(_ask(100, 12, offers=dearer, gpus=GPUS))


def test_a_caller_changing_its_recommendation_changes_no_later_answer(recommend_calls):
    first = _ask(100, 12, gpus=GPUS)
    before = _json(first)
    rec = first.recommendation
    rec.options.clear()
    rec.excluded.clear()
    rec.explanation.append("changed by a caller")  # type: ignore[arg-type]
    rec.what_would_change.clear()
    again = _ask(100, 12, gpus=GPUS)
    assert len(recommend_calls) == 1 and again.recommendation is not rec
    assert _json(again) == before


def test_memos_off_every_question_computes_its_own(recommend_calls):
    with memo.reference():
        _ask(100, 12, gpus=GPUS)
        _ask(200, 24, gpus=GPUS)
    assert len(recommend_calls) == 2
