"""The shortcuts a recommendation prices thousands of offers with give the records' numbers
to the last bit: ``run_cost_typical`` (the typical cost compared across offers, as a float)
is the Money path's amount, and ``run_cost_range`` is ``run_cost``'s cost at each end, for
every billing rule of the shipped offer sets, currencies converted or not, one machine or
several."""

import pytest

from whichgpu.catalog.offers import load_offer_set
from whichgpu.cost.billing import (
    MoneyRange,
    run_cost,
    run_cost_amount,
    run_cost_range,
    run_cost_typical,
)
from whichgpu.cost.currency import convert, default_rates
from whichgpu.errors import InputError
from whichgpu.units import Range

SECONDS = (0.0, 1.0, 59.5, 600.0, 901.0, 3599.9, 3600.0, 36_000.0, 2.5e6)


def _offers():
    offers = [o for name in ("article-000", "vramfarm-2026-11") for o in load_offer_set(name)]
    assert len({o.billing for o in offers}) > 1  # more than one billing rule is compared
    assert len({o.price_per_hour.currency for o in offers}) > 1  # converted and not
    return offers


@pytest.mark.parametrize("currency", ["USD", "EUR", "JPY"])
def test_the_typical_float_is_the_money_paths_amount(currency: str) -> None:
    rates = default_rates()
    for o in _offers():
        for seconds in SECONDS:
            for machines in (1, 2, 3, 7):
                money = (convert(run_cost_amount(o, seconds), currency, rates) * machines)
                assert run_cost_typical(o, seconds, currency, rates, machines) == \
                    money.amount, (o, seconds, machines)
                assert run_cost_typical(o, seconds, currency, None, machines) == \
                    money.amount


def test_the_range_is_run_costs_cost_at_each_end() -> None:
    for o in _offers():
        for low, typical, high in ((0.0, 1.0, 59.5), (600.0, 901.0, 3599.9),
                                   (3600.0, 36_000.0, 2.5e6)):
            for gpus in (None, 1, o.gpu_count + 1):
                want = MoneyRange(*(run_cost(o, d, gpus=gpus).cost
                                    for d in (low, typical, high)))
                assert run_cost_range(o, Range(low, typical, high), gpus=gpus) == want


def test_the_range_refuses_what_run_cost_refuses() -> None:
    o = _offers()[0]
    with pytest.raises(InputError, match="finite"):
        run_cost_range(o, Range(1.0, 2.0, float("inf")))
    with pytest.raises(InputError, match="whole, positive"):
        run_cost_range(o, Range(1.0, 2.0, 3.0), gpus=0)
