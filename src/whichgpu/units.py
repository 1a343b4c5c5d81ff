"""Parsing and printing sizes, counts, durations, money and ranges.

Inside whichgpu every quantity is a plain number in a base unit: bytes, seconds,
FLOP/s, an amount of one currency. This module turns what people type ("48GB",
"70B", "2h30m", "3.15USD") into those numbers and back, and never guesses a unit:
GB is 10^9 bytes and GiB is 2^30 bytes, and both can be shown side by side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from whichgpu.errors import InputError
from whichgpu.messages import msg

KB, MB, GB, TB = 10**3, 10**6, 10**9, 10**12
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40

_SIZE_UNITS = {
    "b": 1, "kb": KB, "mb": MB, "gb": GB, "tb": TB,
    "kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB,
}
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:[.,]\d*)?|\.\d+)(?:e[-+]?\d+)?"
# Spaces people (and French number formats) put between digit groups: '29 300', '1 234,56'.
_SPACES = re.compile(r"[\s\u00a0\u202f\u2009]+")


def _number(text: str) -> float:
    """A float from '1,000', '1,000.5' (thousands) or '0,59', '0,125' (decimal comma: a
    first group of 0 is never a thousands group)."""
    body = text.lstrip("+-")
    if re.fullmatch(r"[1-9]\d{0,2}(,\d{3})+(\.\d*)?(e[-+]?\d+)?", body):
        return float(text.replace(",", ""))
    return float(text.replace(",", "."))


# ---------------------------------------------------------------- sizes

_MEMORY_TYPE = re.compile(r"(ddr4|ddr5|lpddr5x)(?:-(\d{3,5}))?(?:x(\d{1,2}))?")


def parse_memory_type(text: str) -> tuple[str, int | None, int | None]:
    """A host memory type as written (``ddr5``, ``DDR5-6400``, ``ddr4-3200x8``): the type,
    its MT/s and its 64-bit channels (None where not written)."""
    key = str(text).strip().lower().replace(" ", "").replace("_", "-")
    m = _MEMORY_TYPE.fullmatch(key)
    if not m:
        raise InputError(msg("host.memory", "cannot read host memory {v!r}; write it like ddr5, "
                             "ddr5-6000, ddr4-3200x2 or ddr5-4800x8 (type-MT/s x 64-bit "
                             "channels)", v=str(text)))
    return (m.group(1), int(m.group(2)) if m.group(2) else None,
            int(m.group(3)) if m.group(3) else None)


def parse_size(text: str | int | float) -> int:
    """Bytes from a size such as ``48GB``, ``80 GiB``, ``512MiB`` (a unit is required)."""
    if isinstance(text, int | float):
        if isinstance(text, float) and not math.isfinite(text):
            raise InputError(msg("size.finite", "size must be a finite number, got {v}", v=text))
        if text < 0:
            raise InputError(msg("size.negative", "size must not be negative, got {v}", v=text))
        return int(text)
    s = _SPACES.sub("", str(text).strip().lower())
    m = re.fullmatch(rf"({_NUMBER})([a-z]*)", s)
    if not m:
        raise InputError(msg("size.unreadable", "cannot read {v!r} as a size; write it like 48GB "
                             "or 80GiB", v=text))
    value, unit = _number(m.group(1)), m.group(2)
    if unit in ("g", "m", "t", "k"):
        unit += "b"
    if unit not in _SIZE_UNITS:
        raise InputError(msg("size.unit", "size {v!r} needs a unit: B, KB, MB, GB, TB (powers of "
                             "10) or KiB, MiB, GiB, TiB (powers of 2)", v=text))
    if value < 0:
        raise InputError(msg("size.negative.text", "size must not be negative, got {v!r}",
                             v=text))
    if not math.isfinite(value * _SIZE_UNITS[unit]):
        raise InputError(msg("size.infinite", "size {v!r} is not a finite number of bytes",
                             v=text))
    return int(round(value * _SIZE_UNITS[unit]))


def parse_power(text: str | int | float, *, what: str = "power", positive: bool = True
                ) -> float:
    """Watts from ``170W``, ``170 W``, ``1.1kW`` or a bare number of watts (``170``); finite,
    and more than 0 unless ``positive=False`` (the caller then checks the range, as ``tco``
    does with the web's words). One reader for every power a person types (--tdp,
    --gpu-spec tdp=)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = float(text)
    else:
        s = _SPACES.sub("", str(text).strip().lower())
        m = re.fullmatch(rf"({_NUMBER})(w|kw|watts?)?", s)
        if not m:
            raise InputError(f"cannot read {text!r} as a {what}; write it like 170W or 1.1kW")
        value = _number(m.group(1)) * (1000.0 if m.group(2) == "kw" else 1.0)
    if not math.isfinite(value) or (positive and value <= 0):
        raise InputError(f"{what} must be a positive number of watts, got {text!r}")
    return value


def format_bytes(n: float, unit: str = "GB", digits: int = 1) -> str:
    """``format_bytes(81559 * MiB, "GiB") -> '79.6 GiB'``. ``unit`` may be 'auto' (decimal)."""
    if unit == "auto":
        unit = next((u for u, f in (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB))
                     if abs(n) >= f), "B")
    factor = _SIZE_UNITS[unit.lower()]
    return f"{n / factor:,.{digits}f} {unit}"


def format_bytes_both(n: float, digits: int = 1) -> str:
    """Decimal and binary side by side: ``'85.5 GB (79.6 GiB)'``."""
    return f"{format_bytes(n, 'GB', digits)} ({format_bytes(n, 'GiB', digits)})"


# ---------------------------------------------------------------- counts

_COUNT_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}
_BINARY_SUFFIX = {"": 1, "k": 2**10, "m": 2**20}


def parse_count(text: str | int | float, *, binary: bool = False, what: str = "count") -> int:
    """An integer from ``70B``, ``8k``, ``1.5M``, ``70e9`` or ``131072``.

    With ``binary=True`` (context lengths) ``k`` means 1024, as model cards write
    "8k" for 8,192 and "128k" for 131,072 tokens.
    """
    if isinstance(text, bool):
        raise InputError(msg("count.number", "{what} must be a number, got {v!r}", what=what,
                             v=text))
    if isinstance(text, int):
        return text
    if isinstance(text, float):
        value = text
    else:
        s = _SPACES.sub("", str(text).strip().lower().replace("_", ""))
        m = re.fullmatch(rf"({_NUMBER}(?:,\d{{3}})*)([a-z]?)", s)
        if not m:
            raise InputError(msg("count.unreadable", "cannot read {v!r} as a {what}; write it like "
                                 "70B, 8k or 131072", v=text, what=what))
        suffixes = _BINARY_SUFFIX if binary else _COUNT_SUFFIX
        if m.group(2) not in suffixes:
            allowed = ", ".join(k for k in suffixes if k)
            raise InputError(msg("count.suffix", "unknown suffix in {what} {v!r}; use one of "
                                 "{allowed}", what=what, v=text, allowed=allowed))
        value = _number(m.group(1)) * suffixes[m.group(2)]
    if not math.isfinite(value):
        raise InputError(msg("count.finite", "{what} must be finite, got {v!r}", what=what,
                             v=text))
    return int(round(value))


def format_count(n: float, digits: int = 1) -> str:
    """``format_count(70.55e9) -> '70.6B'``; ``format_count(8192) -> '8,192'``."""
    for suffix, factor in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if abs(n) >= factor:
            return f"{n / factor:.{digits}f}{suffix}"
    return f"{n:,.0f}"


# ---------------------------------------------------------------- durations

_DURATION_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}


def parse_duration(text: str | int | float) -> float:
    """Seconds from ``90s``, ``2h30m``, ``3h 20min``, ``1.5h``, ``2d`` (a unit is required)."""
    if isinstance(text, int | float):
        if not math.isfinite(text):
            raise InputError(msg("duration.finite", "duration must be finite, got {v}", v=text))
        if text < 0:
            raise InputError(msg("duration.negative", "duration must not be negative, got {v}",
                                 v=text))
        return float(text)
    s = str(text).strip().lower().replace(",", ".")
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)\s*([a-z]+)", s)
    rebuilt = re.sub(r"\s+", "", "".join(n + u for n, u in parts))
    if not parts or rebuilt != re.sub(r"\s+", "", s):
        if re.fullmatch(_NUMBER, s):
            raise InputError(msg("duration.unit", "duration {v!r} needs a unit, e.g. 90s, 45m, "
                                 "3h20m or 2d", v=text))
        raise InputError(msg("duration.unreadable", "cannot read {v!r} as a duration; write it "
                             "like 90s, 45m or 3h20m", v=text))
    total = 0.0
    for number, unit in parts:
        if unit not in _DURATION_UNITS:
            raise InputError(msg("duration.unknown_unit", "unknown unit {unit!r} in duration "
                                 "{v!r}; use s, m, h, d or w", unit=unit, v=text))
        total += float(number) * _DURATION_UNITS[unit]
    if not math.isfinite(total):
        raise InputError(msg("duration.infinite", "duration {v!r} is not a finite number of "
                             "seconds", v=text))
    return total


def split_duration(seconds: float) -> tuple[str, float, int]:
    """A finite duration as a person reads it, rounded to the minute from a minute on:
    ``('s', seconds, 0)``, ``('min', minutes, 0)``, ``('h', hours, minutes)`` (under two days)
    or ``('d', days, hours)``. Every duration formatter (CLI, tables, web) renders these."""
    if seconds < 60:
        return "s", seconds, 0
    minutes = round(seconds / 60)
    if minutes < 60:
        return "min", minutes, 0
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return "h", hours, minutes
    days, hours = divmod(hours, 24)
    return "d", days, hours


def format_duration(seconds: float) -> str:
    """``format_duration(12000) -> '3 h 20 min'``; rounds to what a person reads."""
    if not math.isfinite(seconds):
        return "∞"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    unit, a, b = split_duration(seconds)
    if unit == "s":
        return f"{a:.0f} s" if a >= 10 else f"{a:.1f} s"
    if unit == "min":
        return f"{a} min"
    if unit == "h":
        return f"{a} h {b} min" if b else f"{a} h"
    return f"{a} d {b} h" if b else f"{a} d"


def format_duration_short(seconds: float) -> str:
    """``format_duration_short(4740) -> '1h19m'``: for tables."""
    if not math.isfinite(seconds):
        return "∞"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    unit, a, b = split_duration(seconds)
    if unit == "s":
        return f"{a:.0f}s"
    if unit == "min":
        return f"{a}m"
    if unit == "h":
        return f"{a}h{b:02d}m" if b else f"{a}h"
    return f"{a}d{b}h" if b else f"{a}d"


# ---------------------------------------------------------------- money

_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}
_BY_SYMBOL = {v: k for k, v in _SYMBOLS.items()}
# Symbols as English and French formats write them (Babel/CLDR): '$US', '£GB', 'CA$', '$CA'.
_AFFIXES = sorted({
    **_BY_SYMBOL, "$US": "USD", "US$": "USD", "£GB": "GBP", "CA$": "CAD", "$CA": "CAD",
    "A$": "AUD", "$AU": "AUD", "NZ$": "NZD", "$NZ": "NZD", "$SG": "SGD", "HK$": "HKD",
    "R$": "BRL", "₹": "INR", "₩": "KRW", "CN¥": "CNY",
}.items(), key=lambda kv: -len(kv[0]))


# codes already checked as written ('USD'): every Money made checks its currency, and a
# recommendation makes thousands
_CHECKED: set[str] = set()


def check_currency(code: str) -> str:
    """An ISO 4217 code, upper-cased (``'eur' -> 'EUR'``)."""
    if type(code) is str and code in _CHECKED:
        return code
    c = str(code).strip().upper()
    if c in _BY_SYMBOL:
        c = _BY_SYMBOL[c]
    if not re.fullmatch(r"[A-Z]{3}", c):
        raise InputError(msg("currency.code", "{v!r} is not a currency code; use an ISO code "
                             "such as USD or EUR", v=code))
    if type(code) is str and code == c:
        _CHECKED.add(c)
    return c


@dataclass(frozen=True, slots=True)
class Money:
    """An amount in one currency. Adding two currencies raises instead of mixing them."""

    amount: float
    currency: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "currency", check_currency(self.currency))

    def _same(self, other: Money) -> None:
        if not isinstance(other, Money):
            raise TypeError(f"cannot combine Money with {type(other).__name__}")
        if other.currency != self.currency:
            raise InputError(
                f"cannot add {self.currency} and {other.currency} without an exchange rate")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount - other.amount, self.currency)

    def __mul__(self, factor: float) -> Money:
        return Money(self.amount * float(factor), self.currency)

    __rmul__ = __mul__

    def __truediv__(self, divisor: float) -> Money:
        return Money(self.amount / float(divisor), self.currency)

    def __lt__(self, other: Money) -> bool:
        self._same(other)
        return self.amount < other.amount

    def to_json(self, digits: int = 6) -> dict[str, object]:
        return {"amount": round(self.amount, digits), "currency": self.currency}

    def __str__(self) -> str:
        return format_money(self)

    def __format__(self, spec: str) -> str:
        """``f"{price}"``: ``$3.15``; a spec of decimals: ``f"{price:0}"``: ``$3``."""
        return format_money(self, int(spec) if spec else None)


def format_age(seconds: float | None) -> str:
    """How old a price is: 'just now', '40 min', '5 h', '18 d', or 'undated'."""
    if seconds is None:
        return "undated"
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"


class Age(float):
    """Seconds since a price was observed, said as an age: ``f"{a}"`` gives '18 d'."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return format_age(float(self))

    def to_json(self) -> dict[str, float]:
        return {"seconds": float(self)}


class Duration(float):
    """Seconds, said as a duration: ``f"{d}"`` gives '3h 20m', ``f"{d:short}"`` '3h20m'."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return (format_duration_short if spec == "short" else format_duration)(float(self))

    def __repr__(self) -> str:
        return f"Duration({float(self)!r})"

    def to_json(self) -> dict[str, float]:
        return {"seconds": float(self)}


def parse_money(text: str | float | int, default_currency: str | None = None) -> Money:
    """``3.15USD``, ``3.15 USD``, ``$3.15``, ``€0.59``, ``0,59 EUR``, ``25kUSD``, and money as
    the web pages show it in English and French: ``CHF1,234.50``, ``29 300,00 $US``,
    ``25 000 €``, ``0,59 €``.

    A bare number takes ``default_currency``; without one it is an error.
    """
    if isinstance(text, int | float):
        if default_currency is None:
            raise InputError(msg("money.currency.number", "amount {v} needs a currency, e.g. "
                                 "{v}USD", v=text))
        if not math.isfinite(text):
            raise InputError(msg("money.finite", "amount must be finite, got {v!r}", v=text))
        return Money(float(text), default_currency)
    s = _SPACES.sub("", str(text).strip())
    sign = s[0] if s[:1] in ("-", "+") and not s[1:2].isdigit() else ""
    s = s[len(sign):]
    currency = None
    for symbol, code in _AFFIXES:
        if s.startswith(symbol):
            currency, s = code, s[len(symbol):]
            break
        if s.endswith(symbol):
            currency, s = code, s[:-len(symbol)]
            break
    if currency is None and re.match(r"[A-Za-z]{3}[\d.,+-]", s):  # CHF1,234.50
        currency, s = s[:3], s[3:]
    s = sign + s
    m = re.fullmatch(rf"({_NUMBER})([kKmM]?)([A-Za-z]{{3}})?", s)
    if not m:
        raise InputError(msg("money.unreadable", "cannot read {v!r} as money; write it like "
                             "3.15USD or 0.59EUR", v=text))
    if m.group(3):
        currency = m.group(3)
    if currency is None:
        if default_currency is None:
            raise InputError(msg("money.currency", "amount {v!r} needs a currency, e.g. {v}USD",
                                 v=text))
        currency = default_currency
    amount = _number(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]
    if not math.isfinite(amount):
        raise InputError(msg("money.finite", "amount must be finite, got {v!r}", v=text))
    return Money(amount, currency)


def format_money(money: Money, digits: int | None = None) -> str:
    """``$3.15``, ``€0.59``, ``12.50 CHF``; small amounts keep significant digits."""
    if digits is None:
        a = abs(money.amount)
        digits = 0 if a >= 1000 else 2 if a >= 0.1 or a == 0 else 4 if a >= 0.001 else 6
    text = f"{abs(money.amount):,.{digits}f}"
    sign = "-" if money.amount < 0 else ""
    symbol = _SYMBOLS.get(money.currency)
    return f"{sign}{symbol}{text}" if symbol else f"{sign}{text} {money.currency}"


# ---------------------------------------------------------------- ranges

@dataclass(frozen=True, slots=True)
class Range:
    """A low / typical / high estimate. Always ``low <= typical <= high``."""

    low: float
    typical: float
    high: float

    def __post_init__(self) -> None:
        if not (self.low <= self.typical <= self.high):
            raise ValueError(f"range must satisfy low <= typical <= high, got {self}")

    @classmethod
    def point(cls, value: float) -> Range:
        return cls(value, value, value)

    @classmethod
    def spread(cls, typical: float, low_factor: float, high_factor: float) -> Range:
        """``Range.spread(10, 0.8, 1.25) -> Range(8, 10, 12.5)``."""
        return cls(typical * low_factor, typical, typical * high_factor)

    def map(self, fn) -> Range:
        """Apply a monotonic function; a decreasing one swaps low and high."""
        a, b, c = fn(self.low), fn(self.typical), fn(self.high)
        return Range(a, b, c) if a <= c else Range(c, b, a)

    def scale(self, factor: float) -> Range:
        return self.map(lambda v: v * factor)

    def inverse(self, numerator: float = 1.0) -> Range:
        """``numerator / range`` (a rate becomes a time): low and high swap."""
        return self.map(lambda v: numerator / v if v else math.inf)

    def to_json(self, digits: int = 6) -> dict[str, float]:
        return {k: round(getattr(self, k), digits) for k in ("low", "typical", "high")}


# ---------------------------------------------------------------- engine versions

# a build number as llama.cpp's releases and logs write it: b4458, 'build 4458', 'version:
# 8763', '(7340)'; a date: 2024-05, 2025
_BUILD = re.compile(r"(?:\bb|build[: ]+|version[: ]+|\()(\d{3,5})\b", re.I)
_DATE = re.compile(r"(20\d\d)(?:-(\d\d))?")


@dataclass(frozen=True)
class EngineVersion:
    """An engine build as someone named it (``b4458``, ``2024-05``, ``ollama``, ``vLLM
    0.7.3``), read once: its build number and month where the text has them. The engine's
    eras (estimate/data/engine_kernels.toml) are matched against ``name`` there."""

    text: str  # as written (said back in the estimate's notes)
    name: str = ""  # the text without surrounding spaces: an era name compares with it
    build: int | None = None  # a llama.cpp build number
    month: str | None = None  # 'YYYY-MM' (a year alone: its June)

    def says(self, word: str) -> bool:
        """Whether the name holds ``word`` (an era's ``match``), case aside."""
        return word in self.name.lower()

    def __str__(self) -> str:
        return self.text


def parse_engine_version(text: str, date: str | None = None) -> EngineVersion | None:
    """An engine build from its text (and, for a measured run, the run's ``date``, which
    wins over a date in the text); None for blank text with no date."""
    name = text.strip()
    build = _BUILD.search(name)
    when = _DATE.search(date or "") or _DATE.search(name)
    if not name and not when:
        return None
    return EngineVersion(text, name, int(build.group(1)) if build else None,
                         f"{when.group(1)}-{when.group(2) or '06'}" if when else None)
