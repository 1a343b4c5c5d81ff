import math

import pytest

from whichgpu.errors import InputError
from whichgpu.units import (
    GB,
    GiB,
    MiB,
    Money,
    Range,
    format_bytes,
    format_duration,
    format_money,
    parse_count,
    parse_duration,
    parse_money,
    parse_size,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("48GB", 48 * GB), ("80 GiB", 80 * GiB), ("512MiB", 512 * MiB), ("1.5TB", 1_500_000_000_000),
    ("24g", 24 * GB), ("0B", 0),
])
def test_parse_size_reads_decimal_and_binary_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["48", "forty GB", "-3GB", "12 parsecs"])
def test_parse_size_rejects_missing_or_unknown_units(text):
    with pytest.raises(InputError):
        parse_size(text)


def test_gb_and_gib_differ_by_seven_percent():
    assert format_bytes(80 * GB, "GiB") == "74.5 GiB"
    assert format_bytes(81559 * MiB, "GB") == "85.5 GB"


@pytest.mark.parametrize(("text", "expected"), [
    ("70B", 70_000_000_000), ("8k", 8_000), ("1M", 1_000_000), ("1.5M", 1_500_000),
    ("70e9", 70_000_000_000), ("131072", 131_072), ("1,000", 1_000), ("2b", 2_000_000_000),
])
def test_parse_count_decimal_suffixes(text, expected):
    assert parse_count(text) == expected


def test_context_lengths_use_binary_k_like_model_cards():
    assert parse_count("8k", binary=True) == 8192
    assert parse_count("128k", binary=True) == 131072


@pytest.mark.parametrize("text", ["seven", "7Q", "1..2"])
def test_parse_count_rejects_garbage(text):
    with pytest.raises(InputError):
        parse_count(text)


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("2h30m", 9000), ("3h 20min", 12000), ("1.5h", 5400), ("2d", 172800),
    ("45m", 2700), ("1h30m15s", 5415),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["3", "3 parsecs", "h", "2h xyz"])
def test_parse_duration_needs_known_units(text):
    with pytest.raises(InputError):
        parse_duration(text)


def test_format_duration_reads_like_the_article():
    assert format_duration(12000) == "3 h 20 min"
    assert format_duration(6000) == "1 h 40 min"
    assert format_duration(45) == "45 s"


@pytest.mark.parametrize(("text", "amount", "currency"), [
    ("3.15USD", 3.15, "USD"), ("3.15 usd", 3.15, "USD"), ("$3.15", 3.15, "USD"),
    ("€0.59", 0.59, "EUR"), ("0,59EUR", 0.59, "EUR"), ("25kUSD", 25000, "USD"),
    ("1,000.50 CHF", 1000.5, "CHF"),
])
def test_parse_money(text, amount, currency):
    m = parse_money(text)
    assert math.isclose(m.amount, amount) and m.currency == currency


def test_bare_amount_needs_a_currency_unless_a_default_is_given():
    with pytest.raises(InputError):
        parse_money("3.15")
    assert parse_money("3.15", default_currency="EUR") == Money(3.15, "EUR")


def test_money_never_mixes_currencies():
    with pytest.raises(InputError, match="exchange rate"):
        Money(1, "EUR") + Money(1, "USD")
    assert Money(1, "EUR") + Money(2, "EUR") == Money(3, "EUR")


def test_money_prints_its_currency():
    assert format_money(Money(1.97, "EUR")) == "€1.97"
    assert format_money(Money(0.0019, "USD")) == "$0.0019"
    assert format_money(Money(12.5, "CHF")) == "12.50 CHF"


def test_range_keeps_low_typical_high_order():
    with pytest.raises(ValueError):
        Range(3, 2, 4)
    rate = Range(4, 5, 6)  # images per minute
    minutes = rate.inverse(1000)
    assert minutes.low == pytest.approx(1000 / 6) and minutes.high == pytest.approx(250)
