"""A money range whose ends print as its value is said as the value alone (flaws8, 1): a
daily volume's machine is billed the whole day, so its cost does not move with the speed,
and "$7.92 ($7.92-$7.92)" told the reader nothing; the answer says why instead. The JSON
keeps the three fields."""

from __future__ import annotations

import re

from whichgpu.advise.explain import money_fixed, money_range
from whichgpu.cost.billing import MoneyRange
from whichgpu.units import Money

# '$7.92 ($7.92-$7.92)': a value followed by a range whose two ends are that value
_EMPTY_RANGE = re.compile(r"(\$[\d,.]+) \(\1-\1\)")


def _usd(*amounts: float) -> MoneyRange:
    return MoneyRange(*(Money(a, "USD") for a in amounts))


def test_a_range_whose_ends_print_as_the_value_is_the_value_alone():
    assert str(money_range(_usd(7.92, 7.92, 7.92))) == "$7.92"
    # ends that differ only below the printed cent are the same to a reader
    assert str(money_range(_usd(7.9201, 7.921, 7.9249))) == "$7.92"
    assert money_fixed(_usd(7.92, 7.92, 7.92))


def test_a_real_range_keeps_its_ends():
    assert str(money_range(_usd(6.0, 7.92, 10.5))) == "$7.92 ($6.00-$10.50)"
    assert not money_fixed(_usd(7.91, 7.92, 7.92))


def test_a_daily_volume_says_its_cost_does_not_move_with_the_speed(cli):
    r = cli("recommend", "llama-3.1-8b", "--tokens-per-day", "50M", "--top", "3", "--json")
    assert r.code == 0, r.err
    data = r.json()
    text = " ".join(data["explanation"])
    assert not _EMPTY_RANGE.search(text), text
    best = data["options"][0]
    cost = best["cost"]  # the JSON keeps low, typical and high
    assert cost["low"] == cost["typical"] == cost["high"]
    assert best["time_s"]["low"] < best["time_s"]["high"]
    # a daily volume's time and cost are each day's, as the advisor page says them (the CLI
    # line said neither 'of each day' nor 'a day')
    assert re.search(r"of each day; \$[\d.]+ a day whatever the speed, as the machine is kept "
                     r"up 24 h at \$", text), text
    assert "billed for a fixed time" not in text


def test_only_a_daily_volume_says_a_day():
    from types import SimpleNamespace

    from whichgpu.advise.explain import what
    from whichgpu.units import Range

    o = SimpleNamespace(time_s=Range(3600.0, 7200.0, 9000.0), cost=_usd(7.92, 7.92, 7.92),
                        spot_risk=None, unit_cost=None, unit=None, price_per_hour=None)
    fixed = str(what(o))  # type: ignore[arg-type]
    daily = str(what(o, daily=True))  # type: ignore[arg-type]
    assert "billed for a fixed time" in fixed and "a day" not in fixed
    assert "of each day; $7.92 a day whatever the speed, as the machine is kept up 24 h" in daily
