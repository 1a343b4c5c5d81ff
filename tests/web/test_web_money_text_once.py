"""A page's money texts are made once per amount, currency and language (issue 27: a page's
render time): each is what Babel says for it, whatever was asked before it."""

from __future__ import annotations

import math

import pytest
from babel.numbers import format_currency

from whichgpu.units import Money
from whichgpu.web.i18n import _BABEL_LOCALE, SCIENTIFIC_FROM, Locale


def _reference(lang: str, amount: float, currency: str, digits: int | None) -> str:
    """Locale.money's rule, said by Babel each time (the code before the cache)."""
    babel = _BABEL_LOCALE[lang]
    if abs(amount) >= SCIENTIFIC_FROM:
        return format_currency(amount, currency, locale=babel, currency_digits=False,
                               format="¤0.##E0" if lang == "en" else "0.##E0\u00a0¤")
    if digits is None:
        a = abs(amount)
        digits = 2 if a >= 0.1 or a == 0 else 4 if a >= 0.001 else 6
    if digits == 0:
        return format_currency(round(amount), currency, locale=babel,
                               format="¤#,##0" if lang == "en" else "#,##0\u00a0¤",
                               currency_digits=False)
    return format_currency(round(amount, digits), currency, locale=babel,
                           decimal_quantization=False)


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
