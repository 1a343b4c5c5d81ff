"""The new cards are used like the others: recommend ranks them, tco weighs buying them."""

import pytest

from whichgpu.advise.recommend import recommend
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.ownership import tco
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.offers import Offer
from whichgpu.units import Money


def _offer(gpu, price):
    return Offer(provider="market", gpu=gpu, price_per_hour=Money(price, "USD"), offer_set="t")


def test_recommend_ranks_new_cards_by_what_the_job_costs_on_them():
    w = build_workload("llama-3.1-8b", quant="q4_k_m", context="4k")
    offers = [_offer("rtx-5080", 0.35), _offer("rtx-pro-6000-ws", 1.8), _offer("h20", 1.2),
              _offer("rx-7900-xtx", 0.30)]
    rec = recommend(build_job(w, tokens="1M"), offers, max_gpus=1)
    ranked = [o.gpu.id for o in rec.options]
    assert set(ranked) == {"rtx-5080", "rtx-pro-6000-ws", "h20", "rx-7900-xtx"}
    costs = [o.cost.typical.amount for o in rec.options]
    assert costs == sorted(costs)
    # bandwidth decides single-stream 4-bit decode: 1,792 GB/s beats 960 GB/s
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.estimate.speed import estimate_speed

    one = {g: estimate_speed(w, default_catalog().get(g)).rates["decode_tokens_per_s"].typical
           for g in ("rtx-pro-6000-ws", "rtx-5080")}
    assert one["rtx-pro-6000-ws"] > 1.3 * one["rtx-5080"]


def test_a_card_nobody_rents_is_still_shown_for_buying():
    w = build_workload("llama-3.1-8b", quant="q4_k_m")
    rec = recommend(build_job(w, tokens="1M"), [_offer("rtx-4090", 0.4)])
    e = next(e for e in rec.excluded if e.gpu.id == "rtx-5070-ti")
    assert e.kind == "offer" and "to buy: 749 USD (2025-02)" in e.reason
    assert "whichgpu tco rtx-5070-ti" in e.reason


@pytest.mark.parametrize(("gpu", "price"), [("rtx-5080", 999), ("dgx-spark", 3999),
                                            ("apple-m4-pro", 2199), ("arc-b580", 249)])
def test_tco_weighs_buying_a_new_card_from_its_catalog_price(gpu, price):
    result = tco(gpu, rent_price="0.30USD", utilization="0.6")
    assert result.ownership.purchase_price.amount == pytest.approx(price)
    assert result.advice is not None and result.advice.decision in ("rent", "buy")


def test_tco_of_a_card_with_no_public_price_asks_for_one():
    from whichgpu.errors import InputError

    with pytest.raises(InputError, match="no purchase price for b300"):
        tco("b300", rent_price="5USD")
