"""Rent-or-buy of the best option and the articles' rules are the answer's (issue 35), not the
page's: RecommendAnswer gives them to any surface."""

from __future__ import annotations

import pytest

from whichgpu.answers import recommend
from whichgpu.answers.requests import Recommend


@pytest.fixture(scope="module")
def answer():
    return recommend(Recommend(model="llama-3.1-8b", task="lora", steps="2000"))


def test_little_use_rents_and_constant_use_buys(answer):
    light = answer.rent_or_buy(10, 12)
    heavy = answer.rent_or_buy(730, 36)
    assert light.decision == "rent" and heavy.decision == "buy"
    # renting costs in proportion to the hours; owning is mostly the card
    assert heavy.rent_cost.amount > 50 * light.rent_cost.amount
    assert light.ownership.inputs.gpu == heavy.ownership.inputs.gpu == answer.rec.best.gpu.id


def test_the_rules_of_q4_and_q5_come_only_with_their_answers(answer):
    bare = [r.id for r in answer.article_rules()]
    given = [r.id for r in answer.article_rules(300, 24)]
    assert not any(i.startswith(("rule.q4.", "rule.q5.")) for i in bare)
    assert any(i.startswith("rule.q4.") for i in given)
    assert any(i.startswith("rule.q5.") for i in given)
    assert set(bare) < set(given)
