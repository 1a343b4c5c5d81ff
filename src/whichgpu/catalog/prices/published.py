"""A small dated history of published prices (``data/history/published.csv``).

The SkyPilot mirror we read holds one version of most catalog files, so it cannot give a price
history. This table does instead: prices a provider or a market index published with a date,
each with its source (``prices history h100`` and the prices page show them as a trend). Every
point is a dated observation, never backdated: a source that gives only a month sits on that
month's last day, and ``date_precision`` says so.

The points are stored as snapshots of their own feeds (``history/on-demand``,
``history/contract-index``; ``kind = "history"``), one snapshot per point in date order. They
are **never part of the default prices**: a 2024 market level is not an offer to rent today.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path

from whichgpu.catalog.offers import offer_from_row
from whichgpu.catalog.prices.sources import FeedResult, parse_time
from whichgpu.errors import DataError

TABLE = "data/history/published.csv"
KIND = "history"
PRECISIONS = ("day", "month")


@dataclass(frozen=True)
class PublishedPoint:
    """One dated, sourced price as a one-offer feed result, and its place in the table."""

    row: int
    result: FeedResult
    precision: str


@cache
def published_points() -> tuple[PublishedPoint, ...]:
    """The table's points, validated (catalog ids, dates, plausible prices), oldest first."""
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.catalog.prices.validate import offer_problem

    catalog = default_catalog()
    where = Path(f"whichgpu/catalog/prices/{TABLE}")
    text = resources.files("whichgpu.catalog.prices").joinpath(TABLE).read_text("utf-8")
    base = hashlib.sha256(text.encode()).hexdigest()[:16]
    now = datetime.now(UTC)
    points = []
    for i, row in enumerate(csv.DictReader(text.splitlines()), start=2):
        feed, precision = row.pop("feed").strip(), row.pop("date_precision").strip()
        if not feed.startswith("history/"):
            raise DataError(where, "a history feed is named history/...", row=i, field="feed")
        if precision not in PRECISIONS:
            raise DataError(where, f"must be one of {', '.join(PRECISIONS)}", row=i,
                            field="date_precision")
        if parse_time(row["observed_at"]) is None or not row["source"].strip():
            raise DataError(where, "every point needs its date and its source", row=i,
                            field="observed_at")
        row["note"] = f"{row['note']} (date precision: {precision})"
        offer = offer_from_row(row, path=where, index=i, offer_set=feed, catalog=catalog)
        problem = offer_problem(offer, now=now)
        if problem:
            raise DataError(where, problem[1], row=i, field=problem[0])
        when = parse_time(offer.observed_at)
        assert when is not None  # the row's date was checked above
        result = FeedResult(feed=feed, source="published", kind=KIND, offers=[offer],
                            fetched_at=when, version=f"{TABLE} row {i}",
                            digest=f"published-{base}-{i}")
        points.append(PublishedPoint(i, result, precision))
    return tuple(sorted(points, key=lambda p: (p.result.fetched_at, p.row)))


def _last_digests(points: tuple[PublishedPoint, ...]) -> dict[str, str]:
    """Each history feed's last point's digest: what the store holds of this table."""
    last: dict[str, str] = {}
    for p in points:
        last[p.result.feed] = p.result.digest or ""
    return last


@cache
def published_marks() -> dict[str, str]:
    """:func:`_last_digests` of the validated points, kept by the parse cache (parse_cache.py)
    per change of the table, of the catalog and exchange rates it is validated against, or
    of the modules that read it: every priced answer compares them with the store, and
    building and validating the points costs ~4 ms of CPU a process (issue 27). Read, never
    changed, by its callers."""
    from whichgpu.parse_cache import cached_parse

    def parse() -> dict[str, str]:
        return _last_digests(published_points())

    root = resources.files("whichgpu")
    names = (f"catalog/prices/{TABLE}", "catalog/data/gpus.toml", "data/exchange_rates.toml")
    files = [f for f in map(root.joinpath, names) if isinstance(f, Path)]
    if len(files) < len(names):  # a zipped package: every time
        return parse()
    from whichgpu.catalog import gpus, offers
    from whichgpu.catalog.prices import validate

    code = [Path(m.__file__ or "") for m in (gpus, offers, validate)]
    return cached_parse("published-marks", files, [Path(__file__), *code], parse, dict)


def ensure_published(store, current) -> None:
    """Store the table's points unless the store already holds this version of the table
    (each feed's current snapshot is the table's last point of it). A changed table replaces
    the history feeds, in one transaction: they hold shipped data only, nothing a user
    stored."""
    last = published_marks()
    have = {s.feed: s.digest for s in current if s.kind == KIND}
    if have != last:
        points = published_points()
        store.replace_feeds([p.result for p in points], expected=_last_digests(points))
