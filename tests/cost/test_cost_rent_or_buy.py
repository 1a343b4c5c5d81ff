"""Rent or buy: the articles' thresholds (S13 questions 4-5, S14) come out of the model.

Nothing here is a rule typed in: the advice compares the cash of renting and of owning over the
horizon, and the thresholds are where that comparison flips for the articles' inputs.
"""

import math

import pytest

from whichgpu.catalog.offers import load_offer_set
from whichgpu.cost import make_inputs, ownership_inputs, rent_or_buy, usage_band
from whichgpu.errors import InputError


def h100(**changes):
    """S11's break-even inputs: $25,000 bought or $3.15/h rented (running costs not counted)."""
    fields = dict(gpu="h100-sxm", purchase_price="25000USD", rent_price="3.15USD",
                  tdp_watts=700, kwh_price="0USD")
    fields.update(changes)
    return make_inputs(**fields)


def test_s14_rent_below_60_percent_utilisation_over_18_months():
    t = rent_or_buy(h100(), horizon_months=18).thresholds
    assert round(t.utilization * 100) == 60  # 25,000 / (3.15 x 730 h x 18)
    assert rent_or_buy(h100(utilization=0.55), horizon_months=18).decision == "rent"
    assert rent_or_buy(h100(utilization=0.65), horizon_months=18).decision == "buy"


def test_s13_rent_below_18_months_at_60_percent_utilisation():
    t = rent_or_buy(h100(utilization=0.6)).thresholds
    assert round(t.months) == 18  # 25,000 / (3.15 x 438 h)
    assert rent_or_buy(h100(utilization=0.6), horizon_months=17).decision == "rent"
    assert rent_or_buy(h100(utilization=0.6), horizon_months=19).decision == "buy"


def test_s11_running_costs_move_the_thresholds_a_little():
    full = h100(kwh_price="0.10USD", cooling_per_hour="0.02USD", utilization=0.6)
    t = rent_or_buy(full, horizon_months=18).thresholds
    assert 0.61 < t.utilization < 0.63 and 18.5 < t.months < 19


# S2's six GPUs: purchase prices (midpoints of S2's ranges), rent from the article-000 offer set,
# power at S9's $0.10/kWh from the TDPs S2 lists (300 W for the A100).
S2_PURCHASE = {"b200": "47500USD", "h200-sxm": "35000USD", "h100-sxm": "25000USD",
               "a100-80gb-sxm": "15000USD", "l40s": "8000USD", "rtx-4090": "1600USD"}
S2_TDP = {"a100-80gb-sxm": 300}


def s2_inputs(**changes):
    offers = load_offer_set("article-000")
    return [ownership_inputs(g, offers=offers, purchase_price=p, tdp_watts=S2_TDP.get(g),
                             **changes) for g, p in S2_PURCHASE.items()]


def test_s13_hours_per_month_band_100_to_500_emerges_over_two_years():
    band = usage_band(s2_inputs(), horizon_months=24)  # S14: "500+ h/month for 2+ years"
    # Below the band no GPU pays back in 2 years; above it every GPU that can pay back does.
    assert min(band.per_gpu, key=band.per_gpu.get) == "rtx-4090"
    assert 100 < band.low < 150 and 400 < band.high < 500
    assert math.floor(band.low / 100) * 100 == 100 and math.ceil(band.high / 100) * 100 == 500
    # The used A100 at $0.72/h never pays back in 2 years, even 24/7.
    assert band.never == ("a100-80gb-sxm",)
    for i in s2_inputs():
        assert rent_or_buy(i, hours_per_month=99, horizon_months=24).decision == "rent"
        high = rent_or_buy(i, hours_per_month=500, horizon_months=24)
        assert high.decision == ("rent" if i.gpu in band.never else "buy")


def test_s10_electricity_at_25_euro_cents_moves_the_advice():
    cheap = s2_inputs()
    dear = s2_inputs(kwh_price="0.25EUR")  # converted to USD at the shipped ECB rate
    base, europe = usage_band(cheap, 24), usage_band(dear, 24)
    assert europe.low > base.low * 1.1  # the 4090 needs ~139 h/month instead of ~120
    assert all(europe.per_gpu[g] > base.per_gpu[g] for g in S2_PURCHASE)
    four090 = {i.gpu: i for i in cheap}["rtx-4090"], {i.gpu: i for i in dear}["rtx-4090"]
    decisions = [rent_or_buy(i, hours_per_month=130, horizon_months=24).decision
                 for i in four090]
    assert decisions == ["buy", "rent"]


def test_advice_carries_its_numbers_and_reasons():
    a = rent_or_buy(h100(utilization=0.6), horizon_months=36)
    assert a.decision == "buy"
    assert a.rent_cost.amount == pytest.approx(3.15 * 438 * 36)
    assert a.saving.amount == pytest.approx(a.rent_cost.amount - a.own_cost.amount)
    data = a.to_json()
    assert data["decision"] == "buy" and data["rent_cost"]["currency"] == "USD"
    assert {"hours_per_month", "utilization", "months"} <= set(data["thresholds"])
    assert any("pays back after" in r for r in a.reasons)


def test_resale_counts_at_the_end_of_the_horizon():
    without = rent_or_buy(h100(utilization=0.5), horizon_months=18)
    resold = rent_or_buy(h100(utilization=0.5, resale_value="12000USD"), horizon_months=18)
    assert without.decision == "rent" and resold.decision == "buy"


def test_rent_or_buy_needs_a_rent_price():
    with pytest.raises(InputError, match="rental price"):
        rent_or_buy(h100(rent_price=None))


@pytest.mark.parametrize("kwargs", [{"hours_per_month": 0}, {"hours_per_month": 800},
                                    {"horizon_months": 0}, {"horizon_months": -3},
                                    {"hours_per_month": float("nan")}])
def test_bad_usage_or_horizon_is_an_input_error(kwargs):
    with pytest.raises(InputError):
        rent_or_buy(h100(), **kwargs)


def test_usage_band_needs_gpus():
    with pytest.raises(InputError):
        usage_band([], 24)
