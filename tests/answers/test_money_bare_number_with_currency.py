"""Money policy (web trial 15): with a currency chosen, a bare number is in that currency; with
none, it still needs one. The rent-or-buy page and ``tco`` read ``5000`` the same way."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.ownership import tco
from whichgpu.errors import InputError
from whichgpu.units import Money


def test_a_bare_amount_takes_the_chosen_currency():
    bare = tco("h100-sxm", purchase_price="25000", host_share="5000", rent_price="2",
               currency="EUR")
    said = tco("h100-sxm", purchase_price="25000EUR", host_share="5000EUR",
               rent_price="2EUR", currency="EUR")
    assert bare.ownership.inputs.host_share == Money(5000, "EUR")
    assert bare.ownership.total_cost == said.ownership.total_cost
    assert bare.ownership.total_cost.currency == "EUR"


def test_without_a_currency_a_bare_amount_is_refused():
    with pytest.raises(InputError, match="needs a currency"):
        tco("h100-sxm", purchase_price="25000USD", host_share="5000", rent_price="2USD")


def test_the_rent_page_takes_a_bare_amount_with_its_currency(web):
    url = ("/rent-or-buy?gpu=h100-sxm&purchase_price=25000&host_share=5000&rent_price=2"
           "&hours_per_month=438")
    assert web.get(url + "&currency=USD").status_code == 200
    refused = web.get(url)
    assert refused.status_code == 422 and "needs a currency" in refused.text
