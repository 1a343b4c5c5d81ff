"""A size's low-high cost is worked out on floats (advise/evaluate.py ``_cost_range`` with
cost/billing.py ``run_cost_range_in``) instead of through the records (run_cost_range,
MoneyRange.convert, .scale, .plus): the same MoneyRange to the last bit for every billing
rule of the shipped offer sets, converted or not, on one machine or several, with and
without a setup time per extra machine; and the same whole answers."""

import pytest

from answer_set import answer, environment
from whichgpu.advise import evaluate
from whichgpu.advise.machines import Machines, Spread
from whichgpu.catalog.offers import load_offer_set
from whichgpu.cost.currency import default_rates
from whichgpu.units import Range

WALLS = [Range(0.0, 1.0, 59.5), Range(600.0, 901.0, 3599.9), Range(3600.0, 36_000.0, 2.5e6)]
SETUPS = [None, Range(30.0, 95.5, 400.0)]


def _both(*args):
    fast = evaluate._cost_range(*args)
    evaluate._RANGES_AS_RECORDS[0] = True
    try:
        return fast, evaluate._cost_range(*args)
    finally:
        evaluate._RANGES_AS_RECORDS[0] = False


@pytest.mark.parametrize("currency", ["USD", "EUR", "JPY"])
def test_the_float_range_is_the_records_range(currency: str) -> None:
    offers = [o for name in ("article-000", "vramfarm-2026-11") for o in load_offer_set(name)]
    assert len({o.billing for o in offers}) > 1 and len({o.price_per_hour.currency
                                                         for o in offers}) > 1
    for rates in (None, default_rates()):
        for o in offers:
            for wall in WALLS:
                for setup in SETUPS:
                    for n in (1, 2, 5):
                        m = Machines(n, o.gpu_count, n * o.gpu_count, o.gpu_count,
                                     Spread.SEPARATE if n > 1 else Spread.ONE)
                        fast, records = _both(o, wall, setup, m, currency, rates)
                        assert fast == records, (o, wall, setup, n)


@pytest.fixture
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("_answer_environment")
def test_the_answers_are_those_of_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    # token shares (a setup per extra machine), spot beside on-demand, a currency
    questions = [{"model": "llama-3.1-8b", "tokens": "3M", "top": 0,
                  "only": "h100-sxm,l40s,rtx-4090,a10g"},
                 {"model": "llama-3.1-8b", "task": "lora", "steps": "500", "spot": True,
                  "currency": "EUR", "only": "h100-sxm,rtx-4090,l40s", "top": 0}]
    fast = [answer("recommend", q) for q in questions]
    monkeypatch.setattr(evaluate, "_RANGES_AS_RECORDS", [True])
    monkeypatch.setattr(evaluate, "_DEFER_RANGES", [False])
    assert [answer("recommend", q) for q in questions] == fast
    assert all(a["options"] for a in fast)
