"""What the prices page shows above its offer table: a per-GPU summary (lowest, median and
range of the latest prices, on demand and spot) and a readable price history (one band per
currency from the lowest to the highest source, the median inside, one line per source
that has several dated prices). Each comes with the rows of its text equivalent."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from markupsafe import Markup

from whichgpu.units import Money
from whichgpu.web import charts
from whichgpu.web.i18n import Locale

#: provider lines drawn at most on one history chart (the rest stay in the band and table)
MAX_LINES = 4


class Tier(StrEnum):
    ON_DEMAND = "on_demand"
    SPOT = "spot"


@dataclass(frozen=True)
class Stats:
    """The latest prices of one GPU in one tier and currency, per GPU-hour."""

    lowest: Money
    median: Money
    highest: Money
    offers: int  # distinct offers: one provider's 1-, 2- and 4-GPU machines at one price count once
    lowest_provider: str


@dataclass(frozen=True)
class GpuPrices:
    gpu: str
    currency: str
    tiers: dict[Tier, Stats]


def _stats(rows: Sequence[tuple[float, str]], currency: str) -> Stats:
    amounts = sorted(a for a, _ in rows)
    low = min(rows)
    return Stats(Money(amounts[0], currency), Money(statistics.median(amounts), currency),
                 Money(amounts[-1], currency), len(rows), low[1])


def summarise(offers: Iterable[Any]) -> list[GpuPrices]:
    """Per GPU and currency: lowest, median and highest price per GPU-hour of each tier.

    An offer sold as 1, 2 or 4 GPUs at one per-GPU price is one price, not three (the
    median would otherwise lean towards providers that list many machine sizes)."""
    seen: dict[tuple[str, str, Tier], dict[tuple, tuple[float, str]]] = {}
    for o in offers:
        p = o.price_per_gpu_hour
        tier = Tier.SPOT if o.spot else Tier.ON_DEMAND
        key = (o.provider, o.region or "", round(p.amount, 6))
        seen.setdefault((o.gpu, p.currency, tier), {})[key] = (p.amount, o.provider)
    out: dict[tuple[str, str], dict[Tier, Stats]] = {}
    for (gpu, cur, tier), rows in seen.items():
        out.setdefault((gpu, cur), {})[tier] = _stats(list(rows.values()), cur)
    return [GpuPrices(gpu, cur, dict(sorted(t.items())))
            for (gpu, cur), t in sorted(out.items())]


@dataclass(frozen=True)
class DayRow:
    """One day of a currency's on-demand history: the sources' cheapest prices."""

    day: date
    low: Money
    median: Money
    high: Money
    sources: int


@dataclass(frozen=True)
class HistoryView:
    currency: str
    chart: Markup | None  # None with fewer than two dated days: the table says it all
    days: list[DayRow]
    lines: list[str]  # the sources drawn as their own line


def _money_in(L: Locale, currency: str) -> charts.Fmt:
    """A chart's amounts in ``currency``, in the page's locale."""
    return lambda v: L.money({"amount": v, "currency": currency})


def _when(pt: Any) -> datetime:
    return pt.observed_at or pt.fetched_at


def history_views(points: Iterable[Any], L: Locale) -> list[HistoryView]:
    """One view per currency, from on-demand points only (a spot price is another market:
    it is in the summary, not in the band)."""
    g = L.gettext
    by_cur: dict[str, list[Any]] = {}
    for pt in points:
        if not pt.spot:
            by_cur.setdefault(pt.cheapest.currency, []).append(pt)
    out = []
    for cur, pts in sorted(by_cur.items()):
        per_day: dict[date, list[float]] = {}
        per_source: dict[str, dict[date, float]] = {}
        for pt in pts:
            day = _when(pt).date()
            per_day.setdefault(day, []).append(pt.cheapest.amount)
            src = f"{pt.feed} · {pt.gpu}"
            old = per_source.setdefault(src, {}).get(day)
            per_source[src][day] = pt.cheapest.amount if old is None else min(old,
                                                                               pt.cheapest.amount)
        rows = [DayRow(d, Money(min(v), cur), Money(statistics.median(v), cur),
                       Money(max(v), cur), len(v)) for d, v in sorted(per_day.items())]
        ts = {d: datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() for d in per_day}
        several = sorted(((s, p) for s, p in per_source.items() if len(p) > 1),
                         key=lambda sp: (-len(sp[1]), sp[0]))[:MAX_LINES]
        lines = [charts.Series(s, f"c{i + 1}", sorted((ts[d], a) for d, a in p.items()))
                 for i, (s, p) in enumerate(several)]
        chart = None
        if len(rows) >= 2:
            chart = charts.band_chart(
                [charts.Day(ts[r.day], r.low.amount, r.median.amount, r.high.amount)
                 for r in rows], lines,
                title=g("On-demand price per GPU-hour over time (%(currency)s)", currency=cur),
                desc=g("For each day with prices: a band from the lowest to the highest "
                       "source, the median source as a line, and a line for each source "
                       "with several dates. The table below gives the same numbers."),
                x_label=g("observed"),
                y_label=g("per GPU-hour (%(currency)s)", currency=cur),
                fx=lambda t: L.date(datetime.fromtimestamp(t, UTC)),
                fy=_money_in(L, cur),
                low_name=g("lowest"), median_name=g("median"))
        out.append(HistoryView(cur, chart, rows, [s.name for s in lines]))
    return out


#: a summary picture is drawn for at most this many GPUs (a longer list stays a table)
MAX_BARS = 15


def summary_charts(rows: Sequence[GpuPrices], L: Locale) -> list[tuple[str, Markup]]:
    """Per currency, one bar per GPU from its lowest to its highest on-demand price, the
    median marked; none where more than ``MAX_BARS`` GPUs would be drawn."""
    g = L.gettext
    out = []
    for cur in sorted({r.currency for r in rows}):
        bars = [charts.RangeRow(r.gpu, st.lowest.amount, st.median.amount, st.highest.amount)
                for r in rows if r.currency == cur
                and (st := r.tiers.get(Tier.ON_DEMAND)) is not None]
        if not bars or len(bars) > MAX_BARS:
            continue
        out.append((cur, charts.range_bars(
            bars, title=g("On-demand price per GPU-hour by GPU (%(currency)s)", currency=cur),
            desc=g("For each GPU, a bar from the lowest to the highest on-demand offer, with "
                   "a mark at the median."),
            fmt=_money_in(L, cur),
            axis_label=g("per GPU-hour (%(currency)s)", currency=cur))))
    return out
