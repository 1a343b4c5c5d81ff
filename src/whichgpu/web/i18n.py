"""English and French: message catalogs (.po files read with Babel), language negotiation, and
numbers, money, sizes, durations and dates formatted per locale.

The catalogs are data files in ``web/locales/<lang>/LC_MESSAGES/messages.po``; English
``msgid`` strings are the keys (gettext's convention), so a missing French entry shows English.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from babel.dates import format_date, format_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import (
    NumberPattern,
    format_currency,
    format_percent,
    format_scientific,
    get_currency_precision,
    get_currency_symbol,
    get_decimal_precision,
    get_decimal_symbol,
    get_group_symbol,
    parse_pattern,
)
from babel.support import Translations

from whichgpu.units import Money, split_duration

LANGS = ("en", "fr")
DEFAULT_LANG = "en"
LANG_NAMES = {"en": "English", "fr": "Français"}
_BABEL_LOCALE = {"en": "en_US", "fr": "fr_FR"}
# From this magnitude on, numbers are written in scientific notation (1.2E30): Babel rounds
# through decimal.Decimal (28 significant digits), and nobody reads 31-digit amounts anyway.
SCIENTIFIC_FROM = 1e15


@cache
def translations(lang: str) -> Translations:
    """The compiled catalog of ``lang`` (read from its .po file once per process)."""
    po = resources.files("whichgpu.web").joinpath(f"locales/{lang}/LC_MESSAGES/messages.po")
    with po.open("rb") as f:
        catalog = read_po(f, locale=lang)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return Translations(fp=buf)


def lang_code(tag: str | None) -> str | None:
    """One of our languages from a tag: 'fr', 'fr-FR', 'fr_CA', 'FR' -> 'fr'; else None."""
    if not tag:
        return None
    code = tag.strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGS else None


def negotiate(query_lang: str | None, cookie_lang: str | None,
              accept_language: str | None) -> str:
    """The page language: ``?lang=``, then the cookie, then ``Accept-Language``, then English.
    ``?lang=fr-FR`` (any ``fr-*``) means French."""
    for choice in (query_lang, cookie_lang):
        code = lang_code(choice)
        if code:
            return code
    return _from_accept(accept_language or "")


def _from_accept(header: str) -> str:
    """The best of our languages in an Accept-Language header (q-values honoured)."""
    best, best_q = DEFAULT_LANG, 0.0
    for i, part in enumerate(header.split(",")[:20]):
        bits = part.strip().split(";")
        tag = bits[0].strip().lower().split("-")[0]
        q = 1.0
        for b in bits[1:]:
            if b.strip().startswith("q="):
                try:
                    q = float(b.strip()[2:])
                except ValueError:
                    q = 0.0
        if tag in LANGS and (q > best_q or (q == best_q and i == 0)) and q > 0:
            best, best_q = tag, q
    return best


@cache
def _babel(lang: str) -> Any:
    """Babel's locale object for ``lang``, parsed once (Babel parses a locale name again on
    every call that is given one: about a third of a page's number formatting)."""
    from babel import Locale as BabelLocale

    return BabelLocale.parse(_BABEL_LOCALE[lang])


@functools.lru_cache(maxsize=256)
def _pattern(pattern: str) -> NumberPattern:
    return parse_pattern(pattern)


def _decimal(x: float | int, pattern: str, lang: str) -> str:
    """Babel's ``format_decimal(x, format=pattern, locale=...)`` (the same defaults), with the
    pattern and the locale parsed once instead of on every number of a page, and each text
    remembered (:func:`_decimal_text`)."""
    return _decimal_text(lang, pattern, type(x).__name__, repr(x), x)


@functools.lru_cache(maxsize=8192)
def _decimal_text(lang: str, pattern: str, kind: str, text: str, x: float | int) -> str:
    """:func:`_decimal`'s text (Babel's ``apply``, 15-50 us each; a page says the same GPU
    sizes, prices and rates again and again); ``kind`` and ``text`` (the number's type and
    repr) keep -0.0 apart from 0.0 and 1 from 1.0 in the cache's key."""
    return _pattern(pattern).apply(x, _babel(lang), decimal_quantization=True,
                                   group_separator=True, numbering_system="latn")


@functools.lru_cache(maxsize=8192)
def _percent_text(lang: str, kind: str, text: str, x: float | int) -> str:
    """Locale.percent's text (Babel's ``format_percent``, 15-50 us each; the memory page says
    each GPU's share of its memory three times, and the shares repeat across questions);
    ``kind`` and ``text`` (the number's type and repr) keep -0.0 apart from 0.0 and 1 from
    1.0 in the cache's key."""
    return format_percent(x, locale=_babel(lang), decimal_quantization=False)


@functools.lru_cache(maxsize=8192)
def _money(lang: str, amount: float, kind: str, text: str, currency: str,
           digits: int | None) -> str:
    """Locale.money's text (Babel's ``format_currency``, said by :class:`_CurrencyShape`);
    ``kind`` and ``text`` (the amount's type and repr) keep -0.0 apart from 0.0 and 1 from 1.0
    in the cache's key."""
    babel = _babel(lang)
    if abs(amount) >= SCIENTIFIC_FROM:
        return format_currency(amount, currency, locale=babel, currency_digits=False,
                               format="¤0.##E0" if lang == "en" else "0.##E0\u00a0¤")
    if digits is None:
        a = abs(amount)
        digits = 2 if a >= 0.1 or a == 0 else 4 if a >= 0.001 else 6
    if digits == 0:
        return _shape(lang, currency, "¤#,##0" if lang == "en" else "#,##0\u00a0¤").say(
            round(amount), currency_digits=False, quantize=True)
    return _shape(lang, currency, None).say(round(amount, digits), currency_digits=True,
                                            quantize=False)


@dataclass(frozen=True)
class _CurrencyShape:
    """What Babel's ``format_currency`` (``NumberPattern.apply``) does to every amount of one
    currency in one locale and pattern, worked out once: the sign's prefix and suffix with the
    currency's symbol in place, the symbols, the grouping and the fraction digits. Babel
    builds these again for each amount (about 57 us a text, ~3 ms of an advisor page);
    tests/web/test_web_money_shape.py checks the texts against Babel's."""

    prefix: tuple[str, str]  # (positive, negative)
    suffix: tuple[str, str]
    group: str
    decimal: str
    int_min: int
    grouping: tuple[int, int]
    frac: tuple[int, int]  # the pattern's (min, max) fraction digits
    currency_frac: int  # the currency's own digits (currency_digits=True)

    def say(self, value: float | int, *, currency_digits: bool, quantize: bool) -> str:
        """``pattern.apply(value, locale, currency=..., currency_digits=...,
        decimal_quantization=quantize)``, step by step as Babel 2.x takes it."""
        number = Decimal(str(value))
        negative = int(number.is_signed())
        number = abs(number).normalize()
        lo, hi = (self.currency_frac,) * 2 if currency_digits else self.frac
        if not quantize:
            hi = max(hi, get_decimal_precision(number))
        whole, _, fraction = f"{number.quantize(Decimal(10) ** -hi):f}".partition(".")
        if len(whole) < self.int_min:
            whole = "0" * (self.int_min - len(whole)) + whole
        size, grouped = self.grouping[0], ""
        while len(whole) > size:
            grouped = self.group + whole[-size:] + grouped
            whole = whole[:-size]
            size = self.grouping[1]
        fraction = fraction or "0"
        if len(fraction) < lo:
            fraction += "0" * (lo - len(fraction))
        if hi == 0 or (lo == 0 and int(fraction) == 0):
            fraction = ""
        else:
            while len(fraction) > lo and fraction[-1] == "0":
                fraction = fraction[:-1]
            fraction = self.decimal + fraction
        return self.prefix[negative] + whole + grouped + fraction + self.suffix[negative]


@functools.lru_cache(maxsize=1024)
def _shape(lang: str, currency: str, pattern: str | None) -> _CurrencyShape:
    """The shape of ``currency``'s texts in ``lang`` with ``pattern`` (None: the locale's
    standard currency pattern)."""
    babel = _babel(lang)
    p = parse_pattern(pattern) if pattern else babel.currency_formats["standard"]
    if "'" in p.pattern or "¤¤" in p.pattern or p.scale or p.exp_prec or "@" in p.pattern:
        raise ValueError(f"a currency pattern this shape does not say: {p.pattern!r}")
    symbol = get_currency_symbol(currency, babel)

    def framed(part: tuple[str, str]) -> tuple[str, str]:
        return (part[0].replace("¤", symbol), part[1].replace("¤", symbol))

    return _CurrencyShape(framed(p.prefix), framed(p.suffix),
                          get_group_symbol(babel, numbering_system="latn"),
                          get_decimal_symbol(babel, numbering_system="latn"),
                          p.int_prec[0], p.grouping, p.frac_prec,
                          get_currency_precision(currency))


@dataclass(frozen=True)
class Locale:
    """Everything a page needs to speak one language: gettext and the formatters."""

    lang: str

    @property
    def babel(self) -> Any:
        """Babel's locale (parsed once)."""
        return _babel(self.lang)

    # ------------------------------------------------------------ messages
    def gettext(self, message: str, **values: Any) -> str:
        text = translations(self.lang).gettext(message)
        return text % values if values else text

    def ngettext(self, singular: str, plural: str, n: int, **values: Any) -> str:
        text = translations(self.lang).ngettext(singular, plural, n)
        return text % {"num": n, **values}

    def has(self, message: str) -> bool:
        """Whether the catalog translates ``message`` (English always does)."""
        return self.lang == "en" or translations(self.lang).gettext(message) != message

    # ------------------------------------------------------------ numbers
    def number(self, x: float | int | None, digits: int = 0) -> str:
        if x is None:
            return "–"
        if isinstance(x, float) and not math.isfinite(x):
            return _infinite(x)
        if abs(x) >= SCIENTIFIC_FROM:
            return self.scientific(x)
        pattern = "#,##0" + ("." + "0" * digits if digits > 0 else "")
        return _decimal(x, pattern, self.lang)

    def scientific(self, x: float) -> str:
        """'1.23E30' / '1,23E30': three significant digits."""
        if not math.isfinite(x):
            return _infinite(x)
        return format_scientific(x, format="0.##E0", locale=self.babel)

    def sig(self, x: float | None, digits: int = 3) -> str:
        """About ``digits`` significant digits: 2.5, 36.7, 1,234."""
        if x is None:
            return "–"
        if not math.isfinite(x):
            return _infinite(x)
        if abs(x) >= SCIENTIFIC_FROM:
            return self.scientific(x)
        a = abs(x)
        places = 0 if a >= 10 ** (digits - 1) or a == 0 else \
            min(6, max(0, digits - 1 - math.floor(math.log10(a))))
        pattern = "#,##0" + ("." + "#" * places if places else "")
        return _decimal(round(x, places), pattern, self.lang)

    def percent(self, x: float | None, digits: int = 0) -> str:
        if x is None:
            return "–"
        if not math.isfinite(x) or abs(x) >= SCIENTIFIC_FROM / 100:
            space = "\u00a0" if self.lang == "fr" else ""
            return f"{self.scientific(x * 100)}{space}%"
        shown = round(x, 2 + digits)
        return _percent_text(self.lang, type(shown).__name__, repr(shown), shown)

    def money(self, m: Money | dict | None, digits: int | None = None) -> str:
        """``€1,234.56`` / ``1 234,56 €``; small amounts keep significant digits."""
        if m is None:
            return "–"
        amount, currency = (m.amount, m.currency) if isinstance(m, Money) else \
            (float(m["amount"]), str(m["currency"]))
        if not math.isfinite(amount):
            return _infinite(amount)
        # the same prices come back on every page (an offer's $/h): each text made once
        return _money(self.lang, amount, type(amount).__name__, repr(amount), currency, digits)


    def gb(self, n_bytes: float | None, digits: int = 1) -> str:
        """Bytes as GB (10^9), the unit GPUs are sold in: '43.2 GB' / '43,2 Go'."""
        if n_bytes is None:
            return "–"
        return f"{self.number(n_bytes / 1e9, digits)}\u00a0{self.gettext('GB')}"

    def gib(self, n_bytes: float | None, digits: int = 1) -> str:
        if n_bytes is None:
            return "–"
        return f"{self.number(n_bytes / 2**30, digits)}\u00a0{self.gettext('GiB')}"

    def duration(self, seconds: float | None) -> str:
        """'3 h 20 min', '2 d 4 h' / '2 j 4 h': rounded to what a person reads."""
        if seconds is None:
            return "–"
        if not math.isfinite(seconds):
            return _infinite(seconds)
        unit, a, b = split_duration(seconds)
        if unit == "s":
            return f"{self.number(a, 0 if a >= 10 else 1)}\u00a0s"
        if unit == "min":
            return f"{a}\u00a0min"
        if unit == "h":
            return f"{a}\u00a0h {b}\u00a0min" if b else f"{a}\u00a0h"
        d = self.gettext("d")
        return (f"{self.number(a)}\u00a0{d} {b}\u00a0h" if b
                else f"{self.number(a)}\u00a0{d}")

    def date(self, when: date | datetime | None) -> str:
        if when is None:
            return "–"
        return format_date(when, format="medium", locale=self.babel)

    def datetime(self, when: datetime | None) -> str:
        if when is None:
            return "–"
        return format_datetime(when, format="medium", locale=self.babel)

    def age(self, seconds: float | None) -> str:
        """How old a price is: 'just now', '40 min', '5 h', '18 d' (undated: 'undated')."""
        g = self.gettext
        if seconds is None:
            return g("undated")
        if seconds < 60:
            return g("just now")
        if seconds < 3600:
            return f"{seconds / 60:.0f}\u00a0min"
        if seconds < 2 * 86400:
            return f"{seconds / 3600:.0f}\u00a0h"
        return f"{self.number(seconds / 86400)}\u00a0{g('d')}"

    def filters(self) -> dict[str, Callable[..., str]]:
        """Jinja filters bound to this locale."""
        return {"number": self.number, "sig": self.sig, "percent": self.percent,
                "money": self.money, "gb": self.gb, "gib": self.gib,
                "duration": self.duration, "date": self.date, "datetime": self.datetime,
                "age": self.age}


def _infinite(x: float) -> str:
    return "–" if math.isnan(x) else "-∞" if x < 0 else "∞"


@cache
def locale(lang: str) -> Locale:
    return Locale(lang if lang in LANGS else DEFAULT_LANG)
