"""A page's money texts are made once per amount, currency and language (issue 27: a page's
render time): each is what Babel says for it, whatever was asked before it."""

from __future__ import annotations

import math

import pytest

from whichgpu.units import Money
from whichgpu.web.i18n import Locale, _money


def _reference(lang: str, amount: float, currency: str, digits: int | None) -> str:
    """What the text function says for this amount, computed afresh (past the cache)."""
    return _money.__wrapped__(lang, amount, type(amount).__name__, repr(amount), currency,
                              digits)


AMOUNTS = [0.0, -0.0, 1, 1.0, 1.5, -2.25, 0.05, 0.0042, 0.000031, 1234.5678, 25000,
           3.15, 2e15, -7e16]


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("digits", [None, 0, 2, 4])
def test_each_money_text_is_babels(lang: str, digits: int | None) -> None:
    loc = Locale(lang)
    for _ in range(2):  # the second round is answered from the cache
        for amount in AMOUNTS:
            for currency in ("USD", "EUR"):
                got = loc.money(Money(amount, currency), digits)
                assert got == _reference(lang, amount, currency, digits), (amount, currency)
                assert loc.money({"amount": amount, "currency": currency}, digits) == \
                    _reference(lang, float(amount), currency, digits)


def test_a_non_finite_amount_is_not_cached_as_a_number() -> None:
    assert Locale("en").money(Money(math.inf, "USD")) != Locale("en").money(Money(1e300, "USD"))
