"""Parse once (issue 35): ``tco``'s money options (purchase price, resale value, host share,
kWh price, cooling, maintenance, rent price) are OptionMoney values read as the request
validates: the amount and the currency written, said back as written; a bare number takes the
request's currency when the answer applies it; what cannot be read is said with the option's
name, in the sentence ownership.parse_flag_money (a Python caller's reader) gives."""

from __future__ import annotations

import pickle

import pytest

from whichgpu.answers.inputs.ownership import parse_flag_money
from whichgpu.answers.inputs.values import OptionMoney
from whichgpu.answers.requests import Tco
from whichgpu.errors import InputError
from whichgpu.messages import Field
from whichgpu.units import Money

MONEY = ("purchase_price", "resale_value", "host_share", "kwh_price", "cooling_per_hour",
         "maintenance_per_year", "rent_price")


@pytest.mark.parametrize("name", MONEY)
def test_a_money_option_is_read_as_it_validates(name: str) -> None:
    q = Tco(gpu="h100-sxm", **{name: "25kEUR"})
    value = getattr(q, name)
    assert isinstance(value, OptionMoney) and (value.amount, value.currency) == (25_000, "EUR")
    assert q.model_dump(exclude_defaults=True)[name] == "25kEUR"
    assert getattr(pickle.loads(pickle.dumps(q)), name) == value
    bare = getattr(Tco(gpu="h100-sxm", **{name: "5000"}), name)
    assert bare.currency is None and bare.money(name, "GBP") == Money(5000, "GBP")
    assert Tco(gpu="h100-sxm", **{name: " "}).model_dump()[name] is None  # blank: not given


@pytest.mark.parametrize("bad", ["abc", "1e400USD", "5XYZ", "3.15 US"])
def test_bad_money_is_the_options_sentence(bad: str) -> None:
    with pytest.raises(InputError) as expected:
        parse_flag_money(bad, Field("kwh_price"), None)
    with pytest.raises(InputError) as got:
        Tco.parse({"gpu": "h100-sxm", "kwh_price": bad})
    assert str(got.value) == str(expected.value)
    assert str(got.value).startswith("--kwh-price: ")


def test_a_bare_number_needs_the_requests_currency() -> None:
    """``--kwh-price 0.3`` with no ``--currency``: the reader's sentence, with the option."""
    value = Tco(gpu="h100-sxm", kwh_price="0.3").kwh_price
    assert value is not None
    with pytest.raises(InputError) as expected:
        parse_flag_money("0.3", Field("kwh_price"), None)
    with pytest.raises(InputError) as got:
        value.money("kwh_price", None)
    assert str(got.value) == str(expected.value)


def test_the_tco_answer_is_the_one_a_python_caller_gets_with_text() -> None:
    """The typed request and the text a Python caller passes to ownership.tco price the same
    ownership (EUR applied to the bare numbers)."""
    import whichgpu.answers as answers
    from whichgpu.answers.inputs.ownership import tco

    text = {"purchase_price": "20000", "kwh_price": "0.25", "rent_price": "2.5EUR",
            "cooling_per_hour": "0.02EUR"}
    typed = answers.tco(Tco(gpu="h100-sxm", currency="EUR", **text)).to_json()
    direct = tco("h100-sxm", currency="EUR", **text).to_json()
    assert {k: typed[k] for k in direct} == direct
    assert typed["inputs"]["purchase_price"] == {"amount": 20000.0, "currency": "EUR"}
