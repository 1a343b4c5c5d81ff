"""Currencies: a dated exchange-rate table, user overrides, and conversion that never guesses.

A base layer beside :mod:`whichgpu.units` (it imports nothing else of whichgpu's but
``units`` and ``errors``): the price store validates currencies with it, and ``cost`` converts
with it (``whichgpu.cost.currency`` re-exports these names).

The shipped table is the ECB reference rates of one stated date
(``whichgpu/data/exchange_rates.toml``).
A rate is written as a pair, ``EURUSD=1.08``: one EUR buys 1.08 USD. Pairs not in the table are
crossed through the table's base (EUR); a pair that cannot be priced is an error that says how
to give the rate, never a silent 1:1.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from whichgpu.errors import DataError, InputError
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Money, check_currency

# Active ISO 4217 currency codes (the maintenance agency's list A.1, as of 2025: SIX Group,
# https://www.six-group.com/en/products-services/financial-information/data-standards.html),
# fund and precious-metal codes included; XTS (testing) and XXX (no currency) left out.
ISO_4217 = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP
BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR
FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES
KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR
MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD
TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR
XOF XPD XPF XPT XSU XUA YER ZAR ZMW ZWG ZWL
""".split())

_RATE = re.compile(
    r"\s*([A-Za-z]{3})\s*[/:\-]?\s*([A-Za-z]{3})\s*=\s*([0-9]*[.,]?[0-9]+(?:e[-+]?\d+)?)\s*")


@dataclass(frozen=True)
class RateTable:
    """Exchange rates against one base currency, with the date and source they come from.

    ``rates[X]`` is how many X one unit of ``base`` buys. ``overrides`` are pairs the user gave
    (``("EUR", "USD"): 1.08``); they win over the table, in both directions.
    """

    base: str
    date: str
    source: str
    rates: Mapping[str, float]
    overrides: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rates", MappingProxyType(dict(self.rates)))
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))

    # ---------------------------------------------------------------- look-up

    def currencies(self) -> list[str]:
        extra = {c for pair in self.overrides for c in pair}
        return sorted({self.base, *self.rates, *extra})

    def _per_base(self, currency: str) -> float | None:
        """Units of ``currency`` per one unit of the base, overrides first."""
        if currency == self.base:
            return 1.0
        if (self.base, currency) in self.overrides:
            return self.overrides[(self.base, currency)]
        if (currency, self.base) in self.overrides:
            return 1.0 / self.overrides[(currency, self.base)]
        return self.rates.get(currency)

    def rate(self, from_currency: str, to_currency: str) -> float:
        """How many ``to_currency`` one ``from_currency`` buys; an unknown pair is an error."""
        a, b = check_currency(from_currency), check_currency(to_currency)
        if a == b:
            return 1.0
        if (a, b) in self.overrides:
            return self.overrides[(a, b)]
        if (b, a) in self.overrides:
            return 1.0 / self.overrides[(b, a)]
        pa, pb = self._per_base(a), self._per_base(b)
        if pa is None or pb is None:
            missing = a if pa is None else b
            raise InputError(msg(
                "rate.missing", "no exchange rate for {a}->{b}: {missing} is not in the "
                "exchange-rate table of {date}; give one with {flag}=<rate> (one {a} in {b})",
                a=a, b=b, missing=missing, date=self.date, flag=Field("rate", f"{a}{b}")))
        return pb / pa

    def is_overridden(self, from_currency: str, to_currency: str) -> bool:
        pairs = {(from_currency, to_currency), (to_currency, from_currency),
                 (self.base, from_currency), (from_currency, self.base),
                 (self.base, to_currency), (to_currency, self.base)}
        return any(p in self.overrides for p in pairs)

    def describe(self) -> str:
        return f"exchange-rate table of {self.date}"

    def describe_pair(self, from_currency: str, to_currency: str) -> Message:
        """``'1 EUR = 1.0705 USD (table of 2024-06-28)'`` or ``'... (given with --rate)'``."""
        r = self.rate(from_currency, to_currency)
        if self.is_overridden(from_currency, to_currency):
            return msg("rate.pair.given", "1 {a} = {rate:.6g} {b} (given with {flag})",
                       a=from_currency, rate=r, b=to_currency, flag=Field("rate"))
        return msg("rate.pair", "1 {a} = {rate:.6g} {b} (table of {date})", a=from_currency,
                   rate=r, b=to_currency, date=self.date)

    def conversion_said(self, froms: Iterable[str], to: str,
                        prices_of: dt.date | None = None) -> Message:
        """The rates that converted ``froms`` into ``to``, and whose they are: the user's
        (``--rate``), or the table's with its date and, given the day the converted prices
        were observed (``prices_of``), how much older than them it is, so an old table is
        never used unsaid (data dates, not the calendar: an answer does not age by itself):
        ``'1 USD = 0.9341 EUR: the exchange-rate table of 2024-06-28, 886 day(s) older than
        the prices it converts (--rate to give the day's rate)'``."""
        froms = list(froms)
        pairs = Join(msg("rate.one", "1 {a} = {rate:.4g} {b}", a=a, rate=self.rate(a, to), b=to)
                     for a in froms)
        if all(self.is_overridden(a, to) for a in froms):
            return msg("rate.given.all", "{pairs} (given with {flag})", pairs=pairs,
                       flag=Field("rate"))
        try:
            days = (prices_of - dt.date.fromisoformat(self.date)).days if prices_of else None
        except ValueError:  # a table whose date is not a day: said as written, no age
            days = None
        if days is None or days <= 0:
            return msg("rate.table", "{pairs}: the exchange-rate table of {date} ({flag} to "
                       "give the day's rate)", pairs=pairs, date=self.date, flag=Field("rate"))
        return msg("rate.table.older", "{pairs}: the exchange-rate table of {date}, {days:,} "
                   "day(s) older than the prices it converts ({flag} to give the day's rate)",
                   pairs=pairs, date=self.date, days=days, flag=Field("rate"))

    # ---------------------------------------------------------------- overriding

    def with_rate(self, from_currency: str, to_currency: str, rate: float) -> RateTable:
        """A copy with one pair fixed by the user: one ``from_currency`` buys ``rate``."""
        a, b = check_currency(from_currency), check_currency(to_currency)
        if a == b:
            raise InputError(msg("rate.same_pair", "a rate needs two different currencies, got {v}",
                                 v=f"{a}{b}"))
        if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
            raise InputError(msg("rate.positive", "exchange rate {pair} must be a positive "
                                 "number, got {v}", pair=f"{a}{b}", v=str(rate)))
        overrides = {k: v for k, v in self.overrides.items() if k not in ((a, b), (b, a))}
        overrides[(a, b)] = float(rate)
        return RateTable(self.base, self.date, self.source, self.rates, overrides)

    def to_json(self) -> dict[str, object]:
        return {
            "base": self.base, "date": self.date, "source": self.source,
            "overrides": {f"{a}{b}": r for (a, b), r in self.overrides.items()},
        }


def known_currency(code: str, rates: RateTable | None = None) -> str:
    """``code`` upper-cased if it is an ISO 4217 code or a currency of ``rates`` (the table and
    the user's ``--rate`` pairs); otherwise a clear error. ``'XYZ'`` is not a currency."""
    c = check_currency(code)
    table = rates or default_rates()
    if c not in ISO_4217 and c not in table.currencies():
        raise InputError(msg("currency.unknown", "unknown currency {v!r}: not an ISO 4217 code; "
                             "use one such as USD, EUR or GBP (the exchange-rate table of "
                             "{date} has {n})", v=code, date=table.date,
                             n=len(table.currencies())))
    return c


def parse_rate(text: str) -> tuple[str, str, float]:
    """``'EURUSD=1.08'`` (also ``EUR/USD=1.08``, ``eur-usd=1,08``) -> ``('EUR', 'USD', 1.08)``."""
    m = _RATE.fullmatch(str(text))
    if not m:
        raise InputError(msg("rate.unreadable", "cannot read {v!r} as an exchange rate; write "
                             "it like EURUSD=1.08 (one EUR buys 1.08 USD)", v=text))
    a, b = check_currency(m.group(1)), check_currency(m.group(2))
    value = float(m.group(3).replace(",", "."))
    if a == b:
        raise InputError(msg("rate.same", "exchange rate {v!r} names the same currency twice",
                             v=text))
    if not (math.isfinite(value) and value > 0):
        raise InputError(msg("rate.not_positive", "exchange rate {v!r} must be a positive "
                             "number", v=text))
    return a, b, value


@cache
def default_rates() -> RateTable:
    """The shipped table (ECB reference rates of its stated date)."""
    path = "whichgpu/data/exchange_rates.toml"
    from whichgpu.parse_cache import cached_toml

    try:
        data = cached_toml("whichgpu", "data/exchange_rates.toml")
        rates = {check_currency(k): float(v) for k, v in data["rates"].items()}
        table = RateTable(check_currency(data["base"]), str(data["date"]), str(data["source"]),
                          rates)
    except (tomllib.TOMLDecodeError, KeyError, ValueError, TypeError) as exc:
        raise DataError(path, f"not a valid rate table ({exc})") from exc
    if any(not (math.isfinite(v) and v > 0) for v in rates.values()):
        raise DataError(path, "every rate must be a positive number")
    return table


def rates_from(overrides: Iterable[str] = (), table: RateTable | None = None) -> RateTable:
    """The shipped table (or ``table``) with the user's ``--rate`` pairs applied."""
    table = table or default_rates()
    for text in overrides:
        table = table.with_rate(*parse_rate(text))
    return table


def convert(money: Money, currency: str, rates: RateTable | None = None) -> Money:
    """``money`` in ``currency``; the same currency comes back unchanged."""
    currency = check_currency(currency)
    if money.currency == currency:
        return money
    rates = rates or default_rates()
    return Money(money.amount * rates.rate(money.currency, currency), currency)
