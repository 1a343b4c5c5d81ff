"""Issue 27: the page's money texts, said by a currency's shape worked out once, are Babel's
``format_currency`` texts, as the page called it, for every currency and kind of amount."""

from __future__ import annotations

import random

import pytest
from babel.numbers import format_currency

from whichgpu.currency import ISO_4217
from whichgpu.units import Money
from whichgpu.web.i18n import _babel, _money


def _babels(lang: str, amount: float, currency: str, digits: int | None) -> str:
    """format_currency as Locale.money called it for every amount before the shapes."""
    babel = _babel(lang)
    if digits is None:
        a = abs(amount)
        digits = 2 if a >= 0.1 or a == 0 else 4 if a >= 0.001 else 6
    if digits == 0:
        return format_currency(round(amount), currency, locale=babel,
                               format="¤#,##0" if lang == "en" else "#,##0\u00a0¤",
                               currency_digits=False)
    return format_currency(round(amount, digits), currency, locale=babel,
                           decimal_quantization=False)


def _said(lang: str, amount: float, currency: str, digits: int | None) -> str:
    return _money.__wrapped__(lang, amount, type(amount).__name__, repr(amount), currency,
                              digits)


def _amounts(n: int, seed: int) -> list[float]:
    """Rounding edges, signs, zeros, and random amounts from a millionth to a trillion."""
    rng = random.Random(seed)
    fixed = [0.0, -0.0, 1.0, 0.5, 2.5, -1.5, 0.005, 0.015, 0.0999999, 0.1, 0.00099, 0.001,
             999.995, 1234.5678, 25000.0, 999999.999, 1e14 - 0.01, 3.15, 12.3456789]
    return fixed + [round(rng.choice((1, -1)) * 10 ** rng.uniform(-6, 12),
                          rng.randint(0, 9)) for _ in range(n)]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_every_currency_is_said_as_babel_says_it(lang: str) -> None:
    for currency in sorted(ISO_4217):
        for amount in (1234.5678, -0.05, 7.0):
            for digits in (None, 0):
                assert _said(lang, amount, currency, digits) == \
                    _babels(lang, amount, currency, digits), (currency, amount, digits)


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("currency", ["USD", "EUR", "JPY", "BHD"])  # 2, 2, 0 and 3 digits
def test_every_kind_of_amount_is_said_as_babel_says_it(lang: str, currency: str) -> None:
    for amount in _amounts(60, sum(map(ord, lang + currency))):
        for digits in (None, 0, 2, 4, 6):
            assert _said(lang, amount, currency, digits) == \
                _babels(lang, amount, currency, digits), (amount, digits)


def test_an_integer_amount_is_said_as_babel_says_it() -> None:
    from whichgpu.web.i18n import Locale

    for lang in ("en", "fr"):
        assert Locale(lang).money(Money(25000, "USD")) == _babels(lang, 25000, "USD", None)
