"""Rent or buy of the best option from any surface (issue 35): ``recommend`` with the hours of
use a month and the months needed answers it in the CLI, the JSON and the REST API, as the
advisor page shows it."""

from __future__ import annotations

import pytest

from whichgpu.answers import recommend
from whichgpu.answers.requests import Recommend

QUESTION = {"model": "llama-3.1-8b", "task": "lora", "steps": "2000"}


def test_the_json_has_rent_or_buy_only_when_asked():
    plain = recommend(Recommend(**QUESTION)).to_json()
    asked = recommend(Recommend(**QUESTION, hours_per_month=730, horizon_months=36)).to_json()
    assert "rent_or_buy" not in plain and "article_rules" not in plain
    advice = asked["rent_or_buy"]
    assert advice["gpu"] == asked["options"][0]["gpu"]
    assert advice["decision"] == "buy"  # a card busy 24/7 for three years pays back
    assert advice["hours_per_month"] == 730 and advice["horizon_months"] == 36
    assert any(str(r).startswith("Q4") for r in asked["article_rules"])


def test_one_without_the_other_is_refused():
    with pytest.raises(ValueError) as err:  # pydantic's ValidationError, as the CLI reads it
        Recommend(**QUESTION, hours_per_month=300)
    assert "rent or buy needs --hours-per-month and --horizon-months together" in str(err.value)


def test_the_cli_says_it_and_the_rest_api_gives_the_same(cli, web):
    out = cli("recommend", "llama-3.1-8b", "--task", "lora", "--steps", "2000",
              "--hours-per-month", "10", "--horizon-months", "12")
    assert out.code == 0, out.err
    assert "Rent or buy" in out.out and "rent" in out.out
    r = web.get("/api/v1/recommend?model=llama-3.1-8b&task=lora&steps=2000"
                "&hours_per_month=10&horizon_months=12")
    assert r.status_code == 200, r.text
    assert r.json()["rent_or_buy"]["decision"] == "rent"
    bad = web.get("/api/v1/recommend?model=llama-3.1-8b&hours_per_month=10")
    assert bad.status_code == 422
    assert bad.json()["message"]["id"] == "recommend.rent_or_buy_both"
