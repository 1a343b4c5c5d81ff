"""The dated offer sets shipped with the package (``catalog/data/offers/*.csv``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from functools import cache
from importlib import resources

from whichgpu.catalog.offers import load_offer_set, shipped_offer_sets
from whichgpu.catalog.prices.sources import FeedResult, PriceSource, Progress


@cache
def shipped_digest(name: str) -> str:
    """sha256 of a shipped set's file: a new package version with new prices has a new one."""
    res = resources.files("whichgpu.catalog").joinpath(f"data/offers/{name}.csv")
    return hashlib.sha256(res.read_bytes()).hexdigest()


class ShippedSource(PriceSource):
    """One feed per shipped set; works offline and seeds a fresh store."""

    kind = "shipped"
    network = False

    def __init__(self, names: list[str] | None = None) -> None:
        self.name = "shipped"
        self.names = names

    def describe(self) -> str:
        return "offer sets shipped with whichgpu: " + ", ".join(shipped_offer_sets())

    def fetch(self, progress: Progress | None = None) -> Iterator[FeedResult]:
        names = self.names or shipped_offer_sets()
        for i, name in enumerate(names):
            if progress:
                progress(name, i, len(names))
            yield FeedResult(feed=name, source=self.name, kind=self.kind,
                             offers=list(load_offer_set(name)), digest=shipped_digest(name))
        if progress:
            progress("done", len(names), len(names))
