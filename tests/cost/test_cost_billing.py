"""Billing: what a run costs under an offer's rule, for one GPU or many; spot kept apart.

Prices come from the shipped offer sets (article-000: S2/S4/S6; vramfarm-2026-11: S20), never
typed in here; the article's results are compared with what the model computes.
"""

import pytest

from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.offers import Offer, load_offer_set
from whichgpu.cost import (
    cheapest_offer,
    instances_needed,
    rates_from,
    run_cost,
    run_cost_range,
)
from whichgpu.errors import InputError
from whichgpu.units import Money, Range, parse_duration


def _offer(set_name, gpu):
    return next(o for o in load_offer_set(set_name) if o.gpu == gpu and not o.spot)


def test_s4_ten_hour_finetune_6_vs_31_50_dollars():
    ten_hours = parse_duration("10h")
    on_4090 = run_cost(_offer("article-000", "rtx-4090"), ten_hours).cost
    on_h100 = run_cost(_offer("article-000", "h100-sxm"), ten_hours).cost
    assert (on_4090.currency, on_h100.currency) == ("USD", "USD")
    assert round(on_4090.amount, 2) == 6.00
    assert round(on_h100.amount, 2) == 31.50
    assert on_h100.amount / on_4090.amount > 5  # "more than 5x"


def test_s6_thousand_h100_for_30_days_cost_2_27_million():
    run = run_cost(_offer("article-000", "h100-sxm"), parse_duration("30d"), gpus=1000)
    assert run.instances == 1000 and run.billed_s == 720 * 3600
    assert run.cost.currency == "USD"
    assert round(run.cost.amount / 1e6, 3) == 2.268  # 1000 x 720 h x $3.15
    assert round(run.cost.amount / 1e6, 1) == 2.3  # "about $2.3 M"


def test_five_minute_run_on_vramfarm_is_billed_15_minutes():
    offer = _offer("vramfarm-2026-11", "rtx-4090")
    run = run_cost(offer, parse_duration("5m"))
    assert run.billed_s == 15 * 60
    assert run.cost == Money(0.59 * 15 / 60, "EUR")
    assert any("billed 15 min" in a for a in run.assumptions())


def test_vramfarm_bills_started_minutes_after_the_minimum():
    offer = _offer("vramfarm-2026-11", "h100-sxm")
    assert run_cost(offer, parse_duration("20m1s")).billed_s == 21 * 60
    assert run_cost(offer, parse_duration("3h20m")).billed_s == 200 * 60


def test_multi_gpu_offer_bills_whole_instances():
    eight = Offer(provider="p", gpu="h100-sxm", gpu_count=8, price_per_hour=Money(20.0, "USD"))
    assert instances_needed(eight, 8) == 1
    assert instances_needed(eight, 9) == 2
    run = run_cost(eight, 3600, gpus=12)
    assert run.instances == 2 and run.gpus_paid == 16
    assert run.cost == Money(40.0, "USD")
    assert any("16 paid for" in a for a in run.assumptions())


def test_duration_range_gives_cost_range_under_the_billing_rule():
    offer = _offer("vramfarm-2026-11", "rtx-4090")
    r = run_cost_range(offer, Range(60, 600, 3600))
    assert r.low.amount == pytest.approx(0.59 / 4)  # 1 min billed 15 min
    assert r.high.amount == pytest.approx(0.59)
    assert r.to_json()["typical"]["currency"] == "EUR"


def test_spot_and_on_demand_are_kept_apart():
    ondemand = Offer(provider="a", gpu="rtx-4090", price_per_hour=Money(0.60, "USD"))
    spot = Offer(provider="b", gpu="rtx-4090", price_per_hour=Money(0.20, "USD"), spot=True)
    assert cheapest_offer([ondemand, spot], "rtx-4090", "USD") is ondemand
    assert cheapest_offer([ondemand, spot], "rtx-4090", "USD", spot=True) is spot
    assert run_cost(spot, 3600).to_json()["pricing"] == "spot"


def test_cheapest_offer_converts_currencies_before_comparing():
    eur = Offer(provider="eu", gpu="rtx-4090", price_per_hour=Money(0.59, "EUR"))
    usd = Offer(provider="us", gpu="rtx-4090", price_per_hour=Money(0.60, "USD"))
    # 0.59 EUR is 0.632 USD at the shipped ECB rate: the USD offer is cheaper ...
    assert cheapest_offer([eur, usd], "rtx-4090", "USD") is usd
    # ... unless the euro is weaker than 0.60 / 0.59 = 1.0169 USD.
    assert cheapest_offer([eur, usd], "rtx-4090", "EUR", rates_from(["EURUSD=1.01"])) is eur


def test_cheapest_offer_counts_whole_instances_for_the_job():
    single = Offer(provider="a", gpu="h100-sxm", price_per_hour=Money(3.0, "USD"))
    eight = Offer(provider="b", gpu="h100-sxm", gpu_count=8, price_per_hour=Money(20.0, "USD"))
    assert cheapest_offer([single, eight], "h100-sxm", "USD", gpus=2) is single
    assert cheapest_offer([single, eight], "h100-sxm", "USD", gpus=8) is eight


@pytest.mark.parametrize("gpus", [0, -1, 1.5])
def test_bad_gpu_counts_are_input_errors(gpus):
    with pytest.raises(InputError):
        run_cost(_offer("article-000", "h100-sxm"), 60, gpus=gpus)


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf")])
def test_bad_durations_are_input_errors(seconds):
    with pytest.raises(InputError):
        run_cost(_offer("article-000", "h100-sxm"), seconds)


def test_billing_rule_describes_s20():
    assert BillingRule(increment_s=60, minimum_s=900).describe() == \
        "per minute after a 15-minute minimum"
