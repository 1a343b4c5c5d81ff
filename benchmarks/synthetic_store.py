"""A price store of any size for the benchmarks: synthetic offers over real catalog ids.

Not data anyone prices a job with: the offers are random (seeded, so every run builds the same
store), but shaped like a real market so that the store's queries do the same work:

* ``feeds`` feeds of ``offers // feeds`` offers each, one synthetic provider per feed (the
  market keeps the newest feed per provider, so each feed stays in the default prices);
* every catalog GPU, in 1-, 2-, 4- and 8-GPU instances, on-demand and spot, in 40 regions,
  under four billing rules;
* prices per GPU-hour drawn around each GPU's price in the shipped market snapshot (or $1),
  from 0.6x to 1.6x, so they pass the store's plausibility checks;
* ``periods`` price periods: each period stores a new snapshot of every feed (a refresh), the
  last one current; the offers of a period differ from the previous one's by a price drift.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.gpus import default_catalog
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.sources import FeedResult, iso
from whichgpu.catalog.prices.store import PriceStore
from whichgpu.units import Money

REGIONS = [f"region-{i:02d}" for i in range(40)]
COUNTS = (1, 1, 1, 2, 4, 8)
RULES = (BillingRule(increment_s=1, minimum_s=0), BillingRule(increment_s=1, minimum_s=60),
         BillingRule(increment_s=60, minimum_s=0), BillingRule(increment_s=3600, minimum_s=3600))


def base_prices() -> dict[str, float]:
    """Per catalog GPU: the median on-demand price per GPU-hour in the shipped snapshot ($1
    where the snapshot has none)."""
    import statistics

    from whichgpu.catalog.prices.market import market_feeds

    seen: dict[str, list[float]] = {}
    for f in market_feeds():
        for o in f.offers:
            if not o.spot:
                seen.setdefault(o.gpu, []).append(o.price_per_gpu_hour.amount)
    return {g.id: statistics.median(seen[g.id]) if g.id in seen else 1.0
            for g in default_catalog().gpus}


def period_offers(feed: int, n: int, period: int, observed: str, seed: int = 7,
                  bases: dict[str, float] | None = None) -> list[Offer]:
    """The ``n`` offers of feed number ``feed`` in price period ``period``."""
    bases = bases or base_prices()
    gpus = sorted(bases)
    rng = random.Random(seed * 1_000_003 + feed)  # the same offers in every period ...
    drift = random.Random(seed * 7919 + feed * 131 + period)  # ... at drifting prices
    provider = f"bench-provider-{feed:02d}"
    out = []
    for i in range(n):
        gpu = gpus[rng.randrange(len(gpus))]
        count = COUNTS[rng.randrange(len(COUNTS))]
        spot = rng.random() < 0.3
        factor = rng.uniform(0.6, 1.6) * (0.5 if spot else 1.0) * drift.uniform(0.97, 1.03)
        per_gpu = max(0.05, round(bases[gpu] * factor, 4))
        out.append(Offer.model_construct(
            provider=provider, gpu=gpu, gpu_count=count,
            price_per_hour=Money(round(per_gpu * count, 4), "USD"),
            billing=RULES[rng.randrange(len(RULES))], spot=spot,
            region=REGIONS[rng.randrange(len(REGIONS))], observed_at=observed,
            source=f"synthetic benchmark offer {i}", offer_set=f"bench/{feed:02d}",
            note=f"instance bench-{gpu}-{count}x-{i}"))
    return out


def periods(offers: int, *, feeds: int = 20, count: int = 10, now: datetime | None = None,
            seed: int = 7) -> Iterator[list[FeedResult]]:
    """The feeds of each price period, oldest first (each period a day after the last,
    the last observed an hour before ``now``)."""
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    bases = base_prices()
    per_feed, extra = divmod(offers, feeds)
    for p in range(count):
        at = now - timedelta(days=count - 1 - p, hours=1)
        yield [FeedResult(feed=f"bench/{f:02d}", source="bench", kind="url",
                          offers=period_offers(f, per_feed + (f < extra), p, iso(at), seed,
                                               bases),
                          fetched_at=at, version=f"period-{p}", digest=f"bench-{seed}-{f}-{p}")
               for f in range(feeds)]


def build(path: str | Path, offers: int, *, feeds: int = 20, count: int = 10,
          seed: int = 7) -> PriceStore:
    """A store at ``path`` with ``count`` periods of ``offers`` current offers each."""
    store = PriceStore(path)
    for results in periods(offers, feeds=feeds, count=count, seed=seed):
        for r in results:
            store.save(r)
    return store
