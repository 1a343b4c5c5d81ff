"""The market snapshot shipped with the package: real, dated offers from the SkyPilot catalog.

``data/market/skypilot.csv`` holds the offers (the offer schema plus ``feed`` and
``instance``), ``data/market/skypilot.json`` per feed: the repository commit and path each
cloud's file was read at, the observation date, the GPU names that could not be mapped (with
their row counts and reasons) and the rows skipped. ``scripts/build_market_snapshot.py``
writes both from the recorded input in ``scripts/data/skypilot-catalog/``; a test rebuilds
them and compares.

The snapshot seeds the store as the feeds ``skypilot/<cloud>``, the same feeds that
``whichgpu prices refresh --source skypilot`` refreshes: a newer refresh replaces a cloud's
shipped prices, and a newer package's snapshot never replaces newer refreshed ones.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.offers import OFFER_FIELDS, Offer, offer_from_row
from whichgpu.catalog.prices.sources import (
    FeedResult,
    PriceSource,
    Progress,
    Unmapped,
    parse_time,
    utc_now,
)

CSV_FILE = "data/market/skypilot.csv"
META_FILE = "data/market/skypilot.json"
SNAPSHOT_FIELDS = ("feed", "instance", *OFFER_FIELDS)


@dataclass(frozen=True)
class MarketFeed:
    """One cloud's part of the shipped snapshot. Its digest and metadata come without
    building its offers (every command checks them; only seeding a store needs the offers)."""

    feed: str
    meta: dict[str, Any]
    digest: str
    rows: tuple[tuple[int, dict[str, str]], ...] = field(repr=False, compare=False)

    @property
    def offers(self) -> tuple[Offer, ...]:
        return _offers(self.feed)

    @property
    def observed_at(self):
        return parse_time(self.meta.get("observed_at"))

    def result(self) -> FeedResult:
        unmapped = [Unmapped(u["provider"], u["name"], u["reason"], u.get("instance"), None,
                             tuple(u.get("candidates") or ()), u["rows"])
                    for u in self.meta.get("unmapped", [])]
        return FeedResult(feed=self.feed, source="skypilot", kind="skypilot",
                          offers=list(self.offers), fetched_at=utc_now(),
                          version=self.meta.get("version"), digest=self.digest,
                          unmapped=unmapped, skipped=dict(self.meta.get("skipped", {})))


def _read(name: str) -> str:
    return resources.files("whichgpu.catalog.prices").joinpath(name).read_text("utf-8")


@cache
def market_feeds() -> tuple[MarketFeed, ...]:
    """The shipped snapshot's feeds (empty if the package ships none). Every priced answer
    checks their digests against the store's: read once per change of the two files or of
    this module (parse_cache.py), ~4 ms of CPU a process otherwise (issue 27)."""
    from whichgpu.parse_cache import cached_parse

    root = resources.files("whichgpu.catalog.prices")
    files = [f for f in (root.joinpath(CSV_FILE), root.joinpath(META_FILE))
             if isinstance(f, Path) and f.is_file()]
    if len(files) < 2:  # a zipped package, or no snapshot shipped
        return _parse_feeds()
    return cached_parse("market-feeds", files, Path(__file__), _parse_feeds, tuple)


def _parse_feeds() -> tuple[MarketFeed, ...]:
    try:
        text, meta_text = _read(CSV_FILE), _read(META_FILE)
    except FileNotFoundError:
        return ()
    meta = json.loads(meta_text)
    rows: dict[str, list[tuple[int, dict]]] = {}
    for i, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        rows.setdefault(row["feed"], []).append((i, row))
    feeds = []
    for feed, info in sorted(meta["feeds"].items()):
        group = rows.get(feed, [])
        digest = hashlib.sha256(json.dumps([r for _, r in group], sort_keys=True).encode()
                                + json.dumps(info, sort_keys=True).encode()).hexdigest()
        feeds.append(MarketFeed(feed, info, digest, tuple(group)))
    return tuple(feeds)


@cache
def _offers(feed: str) -> tuple[Offer, ...]:
    """A shipped feed's offers, validated like any offer file's rows."""
    catalog = default_catalog()
    path = Path(f"whichgpu/catalog/prices/{CSV_FILE}")
    (chosen,) = [f for f in market_feeds() if f.feed == feed]
    return tuple(offer_from_row(row, path=path, index=i, offer_set=feed, catalog=catalog)
                 for i, row in chosen.rows)


def market_feed_names() -> list[str]:
    return [f.feed for f in market_feeds()]


class MarketSnapshotSource(PriceSource):
    """The shipped market snapshot (no network); seeds ``skypilot/<cloud>`` feeds."""

    kind = "skypilot"
    network = False

    def __init__(self, feeds: list[str] | None = None) -> None:
        self.name = "skypilot"
        self.feeds = feeds

    def describe(self) -> str:
        return "the SkyPilot catalog snapshot shipped with whichgpu"

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        chosen = [f for f in market_feeds() if self.feeds is None or f.feed in self.feeds]
        for f in chosen:
            yield f.result()


def write_snapshot(results: list[FeedResult], meta: dict[str, dict[str, Any]],
                   folder: Path) -> None:
    """Write the snapshot files (deterministic: sorted rows, fixed number formatting)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SNAPSHOT_FIELDS, lineterminator="\n")
    writer.writeheader()
    for r in sorted(results, key=lambda r: r.feed):
        offers = sorted(r.offers, key=lambda o: (o.gpu, o.gpu_count, o.spot, o.note or "",
                                                 o.price_per_hour.amount))
        for o in offers:
            writer.writerow({
                "feed": r.feed, "instance": o.instance_type or (o.note or "").split(";", 1)[0],
                "provider": o.provider, "gpu": o.gpu, "gpu_count": o.gpu_count,
                "price_per_hour": f"{o.price_per_hour.amount:.10g}",
                "currency": o.price_per_hour.currency,
                "billing_increment_s": f"{o.billing.increment_s:g}",
                "billing_minimum_s": f"{o.billing.minimum_s:g}",
                "spot": "true" if o.spot else "false", "region": o.region or "",
                "observed_at": o.observed_at or "", "source": o.source or "",
                "note": o.note or ""})
    (folder / Path(CSV_FILE).name).write_text(out.getvalue(), "utf-8")
    feeds = {}
    for r in sorted(results, key=lambda r: r.feed):
        info = dict(meta[r.feed])
        info["offers"] = len(r.offers)
        info["unmapped"] = [{"provider": u.provider, "name": u.name, "instance": u.instance,
                             "reason": u.reason, "candidates": list(u.candidates),
                             "rows": u.rows} for u in r.unmapped]
        info["skipped"] = dict(sorted(r.skipped.items()))
        feeds[r.feed] = info
    doc = {"about": "whichgpu's shipped market snapshot: offers built from the SkyPilot "
                    "catalog by scripts/build_market_snapshot.py (see docs/prices.md)",
           "feeds": feeds}
    (folder / Path(META_FILE).name).write_text(json.dumps(doc, indent=1, sort_keys=True)
                                               + "\n", "utf-8")
