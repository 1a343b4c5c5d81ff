"""Currencies: a dated, sourced rate table; overrides; conversion both ways; no silent mixing."""

import pytest

from whichgpu.cost import RateTable, convert, default_rates, parse_rate, rates_from
from whichgpu.errors import InputError
from whichgpu.units import Money


def test_shipped_table_is_dated_sourced_and_euro_based():
    t = default_rates()
    assert t.base == "EUR" and t.date == "2024-06-28"
    assert "ecb.europa.eu" in t.source
    assert {"USD", "GBP", "JPY", "CHF"} <= set(t.rates)
    assert all(v > 0 for v in t.rates.values())


def test_conversion_both_ways_uses_the_same_rate():
    usd = convert(Money(100, "EUR"), "USD")
    assert usd == Money(100 * default_rates().rates["USD"], "USD")
    back = convert(usd, "EUR")
    assert back.currency == "EUR" and back.amount == pytest.approx(100)


def test_cross_rates_go_through_the_euro():
    t = default_rates()
    assert t.rate("USD", "GBP") == pytest.approx(t.rates["GBP"] / t.rates["USD"])


def test_user_rate_overrides_the_table_in_both_directions():
    t = rates_from(["EURUSD=1.08"])
    assert convert(Money(1, "EUR"), "USD", t).amount == pytest.approx(1.08)
    assert convert(Money(1.08, "USD"), "EUR", t).amount == pytest.approx(1.0)
    # crosses through EUR use the override too
    assert t.rate("USD", "GBP") == pytest.approx(default_rates().rates["GBP"] / 1.08)
    assert "given" in t.describe_pair("EUR", "USD")
    assert t.to_json()["overrides"] == {"EURUSD": 1.08}


def test_a_pair_outside_the_table_can_be_given():
    t = rates_from(["USDXAU=0.0004"])
    assert convert(Money(2500, "USD"), "XAU", t).amount == pytest.approx(1.0)
    assert convert(Money(1, "XAU"), "USD", t).amount == pytest.approx(2500)


def test_unknown_pair_is_a_clear_error():
    with pytest.raises(InputError, match=r"no exchange rate for USD->XYZ.*--rate USDXYZ="):
        convert(Money(1, "USD"), "XYZ")


@pytest.mark.parametrize("text, expected", [
    ("EURUSD=1.08", ("EUR", "USD", 1.08)),
    ("eur/usd=1,08", ("EUR", "USD", 1.08)),
    ("GBP-CHF = 1.1", ("GBP", "CHF", 1.1)),
])
def test_parse_rate(text, expected):
    assert parse_rate(text) == expected


@pytest.mark.parametrize("text", ["EURUSD", "EURUSD=0", "EURUSD=-1", "EUREUR=1", "EU=1",
                                  "EURUSD=abc"])
def test_bad_rates_are_input_errors(text):
    with pytest.raises(InputError):
        parse_rate(text)


def test_amounts_never_mix_silently():
    with pytest.raises(InputError, match="exchange rate"):
        Money(1, "EUR") + Money(1, "USD")


def test_rate_table_is_immutable_and_with_rate_returns_a_copy():
    t = default_rates()
    t2 = t.with_rate("EUR", "USD", 2.0)
    assert t.rate("EUR", "USD") != 2.0 and t2.rate("EUR", "USD") == 2.0
    with pytest.raises(TypeError):
        t.rates["USD"] = 3  # type: ignore[index]
    assert isinstance(t2, RateTable)


def test_only_iso_codes_or_the_tables_currencies_are_currencies():
    from whichgpu.cost.currency import ISO_4217, known_currency

    assert known_currency("eur") == "EUR" and known_currency("XAU") == "XAU"
    assert set(default_rates().currencies()) <= ISO_4217
    with pytest.raises(InputError, match="ISO 4217"):
        known_currency("XYZ")
    # A currency the user prices with --rate is known for that run.
    assert known_currency("XYZ", rates_from(["USDXYZ=2"])) == "XYZ"


@pytest.mark.parametrize("args", [("gpus", "--currency", "XYZ"),
                                  ("prices", "list", "h100", "--currency", "XYZ")])
def test_listings_refuse_a_made_up_currency(cli, args):
    r = cli(*args)
    assert r.code == 2 and "ISO 4217" in r.err and r.out == ""
