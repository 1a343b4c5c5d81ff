"""Serving targets as people type them (issue 35: parsed once, in the answer layer): a
latency (``2s``, ``60ms``), a latency at a percentile (``2s@p95``) and a request rate
(``20``, ``1200/min``). The sizing (advise/serving.py) takes the numbers."""

from __future__ import annotations

import math
import re

from whichgpu.advise.serving import PERCENTILE_TARGETS
from whichgpu.errors import InputError
from whichgpu.messages import Field, msg

MAX_REQUESTS_PER_S = 1e6  # bound on the input (a million requests/s)
_LATENCY_UNITS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0}


def parse_latency(text: str | float | None, what: str | Field) -> float | None:
    """Seconds from ``2s``, ``60ms``, ``0.06s`` (a unit is required); None stays None."""
    if text is None or text == "":
        return None
    if isinstance(text, int | float):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*(\d+(?:[.,]\d*)?|[.,]\d+)\s*([a-z]*)\s*", str(text).lower())
        if not m:
            raise InputError(msg("latency.unreadable", "cannot read {v!r} as a {what}; write it "
                                 "like 2s or 60ms", v=text, what=what))
        unit = m.group(2)
        if not unit:
            raise InputError(msg("latency.unit", "{what} {v!r} needs a unit, e.g. 2s or 60ms",
                                 what=what, v=text))
        if unit not in _LATENCY_UNITS:
            raise InputError(msg("latency.unknown_unit", "unknown unit {unit!r} in {what} {v!r}; "
                                 "use ms or s", unit=unit, what=what, v=text))
        value = float(m.group(1).replace(",", ".")) * _LATENCY_UNITS[unit]
    if not value > 0 or not math.isfinite(value):
        raise InputError(msg("latency.positive", "{what} must be positive, got {v!r}", what=what,
                             v=text))
    if value > 3600:
        raise InputError(msg("latency.hour", "{what} must be at most an hour, got {v!r}",
                             what=what, v=text))
    return value


def parse_rate(text: str | float | None) -> float | None:
    """Requests per second from ``20``, ``20/s``, ``1200/min`` or ``72000/h``."""
    if text is None or text == "":
        return None
    if isinstance(text, int | float):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*(\d+(?:[.,]\d*)?|[.,]\d+)\s*(?:/\s*(s|sec|min|h|hr))?\s*",
                         str(text).lower())
        if not m:
            raise InputError(msg("requests.unreadable", "cannot read {v!r} as requests per second; "
                                 "write it like 20 or 1200/min", v=text))
        per = {"s": 1, "sec": 1, "min": 60, "h": 3600, "hr": 3600}[m.group(2) or "s"]
        value = float(m.group(1).replace(",", ".")) / per
    if not value > 0 or not math.isfinite(value):
        raise InputError(msg("requests.positive", "{flag} must be positive, got {v!r}",
                             flag=Field("requests_per_s"), v=text))
    if value > MAX_REQUESTS_PER_S:
        raise InputError(msg("requests.most", "{flag} must be at most 1,000,000",
                             flag=Field("requests_per_s")))
    return value


def parse_latency_target(text: str | float | None, what: Field
                         ) -> tuple[float | None, int | None]:
    """(seconds, percentile) from ``2s``, ``60ms@p99``, ``2s@mean``; the percentile is None
    for a mean target."""
    if text is None or text == "" or isinstance(text, int | float):
        return parse_latency(text, what), None
    value, at, pct = str(text).partition("@")
    if not at:
        return parse_latency(value, what), None
    tag = pct.strip().lower()
    if tag in ("mean", "avg", "average"):
        return parse_latency(value, what), None
    m = re.fullmatch(r"p(\d\d)", tag)
    if not m or int(m.group(1)) not in PERCENTILE_TARGETS:
        raise InputError(msg("latency.percentile", "{what} {v!r}: the percentile after @ must "
                             "be p50, p90, p95, p99 or mean (e.g. 2s@p95)", what=what,
                             v=str(text)))
    return parse_latency(value, what), int(m.group(1))
