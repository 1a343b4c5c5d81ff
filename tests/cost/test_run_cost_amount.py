"""run_cost_amount, what a recommendation ranks many offers by, is run_cost's cost to the
last bit for every billing rule of the shipped offer sets: minimums, rounding and zero."""

from whichgpu.catalog.offers import load_offer_set
from whichgpu.cost.billing import run_cost, run_cost_amount


def test_the_amount_is_run_costs_for_every_shipped_offer() -> None:
    offers = [o for name in ("article-000", "vramfarm-2026-11") for o in load_offer_set(name)]
    rules = {o.billing for o in offers}
    assert len(rules) > 1  # more than one billing rule is compared
    for o in offers:
        for seconds in (0.0, 1.0, 59.5, 600.0, 901.0, 3599.9, 3600.0, 36_000.0, 2.5e6):
            assert run_cost_amount(o, seconds) == run_cost(o, seconds).cost, (o, seconds)
    short = next(o for o in offers if o.billing.billed_seconds(60.0) > 60.0)
    assert run_cost_amount(short, 60.0).amount > short.price_per_hour.amount * 60 / 3600
