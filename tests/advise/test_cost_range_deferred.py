"""An option is priced on its GPU's cheapest offer: the on-demand offers are compared on their
typical cost alone, and only the winner's low-high cost range is worked out
(advise/evaluate.py ``_DEFER_RANGES``). The answers are the same as when every offer's
range is worked out: the same offer chosen, the same numbers."""

from __future__ import annotations

import pytest

from answer_set import answer, environment
from whichgpu.advise import evaluate

# offers under different billing rules (per second, per minute after a minimum, per hour),
# several providers per GPU, currencies, spot beside on-demand, a price cap, a deadline
QUESTIONS = {
    "tokens-market": {"model": "llama-3.1-8b", "tokens": "2M", "top": 0,
                      "only": "h100-sxm,a100-80gb-sxm,l40s,rtx-4090,a10g"},
    "steps-vramfarm": {"model": "llama-3.1-8b", "task": "lora", "steps": "300",
                       "prices": "vramfarm-2026-11", "top": 0},
    "images-article-eur": {"model": "flux.1-dev", "task": "image", "images": "200",
                           "prices": "article-000", "currency": "EUR", "top": 0},
    "lora-spot": {"model": "llama-3.1-8b", "task": "lora", "steps": "500", "spot": True,
                  "only": "h100-sxm,a100-80gb-sxm,rtx-4090,l40s", "top": 0},
    "tokens-cap-deadline": {"model": "llama-3.1-8b", "tokens": "5M", "deadline": "3h",
                            "max_price_per_hour": "3USD",
                            "only": "h100-sxm,l40s,rtx-4090,a10g,l4", "top": 0},
}

SEVERAL_OFFERS = {"tokens-market", "lora-spot", "tokens-cap-deadline"}  # market prices


@pytest.fixture(autouse=True)
def _answer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name, value in environment(str(tmp_path / "home")).items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_deferred_ranges_change_no_answer(name: str, monkeypatch) -> None:
    ranges: list[int] = []
    real = evaluate._cost_range  # one offer's low-high cost

    def counted(*args, **kw):
        ranges.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(evaluate, "_cost_range", counted)
    fast = answer("recommend", QUESTIONS[name])
    deferred = len(ranges)
    ranges.clear()
    monkeypatch.setattr(evaluate, "_DEFER_RANGES", [False])
    every = answer("recommend", QUESTIONS[name])
    assert fast == every
    assert fast["options"]
    if name in SEVERAL_OFFERS:  # fewer ranges worked out: the shortcut was taken
        assert deferred < len(ranges)
    else:  # one offer per GPU: one range per option either way
        assert deferred == len(ranges)
