"""``prices ...``: the offers with their age and source, a GPU's price history, and the price
store's upkeep (refresh, import, sources, prune, remove)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whichgpu.answers.catalog import in_currency
from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.requests import (
    PricesHistory,
    PricesImport,
    PricesList,
    PricesPrune,
    PricesRefresh,
    PricesRemove,
    PricesSources,
    SourcesAdd,
    SourcesRemove,
)
from whichgpu.catalog.gpus import family_ids
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import OfferSelection, PriceStore, current_offers
from whichgpu.catalog.prices.imports import import_file, remove_import
from whichgpu.catalog.prices.refresh import FeedOutcome, RefreshBusy, RefreshReport, refresh
from whichgpu.catalog.prices.registry import all_sources, builtin_sources, get_source
from whichgpu.catalog.prices.selection import ensure_shipped
from whichgpu.catalog.prices.sources import PriceSource, utc_now
from whichgpu.catalog.prices.store import HistoryPoint
from whichgpu.catalog.prices.url import check_url
from whichgpu.errors import InputError, NotFoundError, closest
from whichgpu.messages import Field, Join, msg
from whichgpu.units import parse_duration


def store(path: str | None) -> PriceStore:
    return PriceStore(Path(path) if path else None)


#: Offers a table shows unless --limit says otherwise (JSON lists them all).
DEFAULT_ROWS = 25

# ------------------------------------------------------------------ list

@dataclass(frozen=True)
class PricesAnswer:
    """``whichgpu prices list``: the offers shown, how many there are, where they come from."""

    request: PricesList
    ids: list[str] | None
    offers: list[Offer]
    total: int
    selection: OfferSelection
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        s = self.selection
        return {"gpu": self.request.gpu, "gpus": self.ids, "offers": [
            {**o.to_json(), "age_s": s.age_s(o), "stale": s.is_stale(o)} for o in self.offers],
            "total": self.total, "prices": s.to_json()}


def prices_list(q: PricesList, ctx: Context = LOCAL) -> PricesAnswer:
    """Offers, cheapest per GPU-hour first, with each price's age and source."""
    if q.spot and q.on_demand:
        raise InputError(msg("prices.spot_and_on_demand", "{spot} and {on_demand} exclude each "
                             "other", spot=Field("spot"), on_demand=Field("on_demand")))
    ids, note = family_ids(q.gpu)
    if q.store is not None:  # the command line names a store file
        selection = current_offers(q.prices, store=Path(q.store), max_age_days=q.max_age,
                                   gpus=ids)
    else:
        selection = ctx.offers(q.prices, q.max_age, gpus=ids)
    if q.currency:
        selection = in_currency(selection, q.currency)
    chosen = [o for o in selection.sorted()
              if (ids is None or o.gpu in ids) and (not q.spot or o.spot)
              and (not q.on_demand or not o.spot)
              and (q.provider is None or o.provider.lower() == q.provider.lower())]
    limit = q.limit if q.limit is not None else (0 if q.as_json else DEFAULT_ROWS)
    shown = chosen if limit <= 0 else chosen[:limit]
    return PricesAnswer(q, ids, shown, len(chosen), selection, note)


# ------------------------------------------------------------------ history

@dataclass(frozen=True)
class HistoryAnswer:
    """``whichgpu prices history``: a GPU's cheapest price per snapshot and feed."""

    request: PricesHistory
    ids: list[str] | None
    points: list[HistoryPoint]
    store_path: str | None  # None on the web: a visitor has no business with the server's paths
    note: str | None = None
    undated: tuple[HistoryPoint, ...] = ()  # prices with no date: listed, never plotted

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"gpu": self.request.gpu, "gpus": self.ids,
                                "points": [p.to_json() for p in self.points],
                                "undated": [p.to_json() for p in self.undated]}
        if self.store_path is not None:
            data["store"] = self.store_path
        return data


def prices_history(q: PricesHistory, ctx: Context = LOCAL) -> HistoryAnswer:
    """How a GPU's cheapest price moved, snapshot by snapshot, per feed; an unknown ``feed`` is
    bad input, not an empty history."""
    ids, note = family_ids(q.gpu)
    st = store(q.store)
    ensure_shipped(st)
    if q.feed is not None and ctx.public:
        feeds = sorted({snap.feed for snap in st.current()})
        if q.feed not in feeds:
            near = closest(q.feed, feeds)
            raise InputError(msg("prices.unknown_feed.near", "unknown price feed {v!r}; did you "
                                 "mean {near}?", v=q.feed, near=Join(near)) if near else
                             msg("prices.unknown_feed", "unknown price feed {v!r}; the store "
                                 "has {feeds}", v=q.feed, feeds=", ".join(feeds) or "no feed"))
    return HistoryAnswer(q, ids, st.history(ids or [], feed=q.feed),
                         None if ctx.public else str(st.path), note,
                         tuple(st.history(ids or [], feed=q.feed, dated=False)))


# ------------------------------------------------------------------ the store's upkeep

@dataclass(frozen=True)
class RefreshAnswer:
    """``whichgpu prices refresh``: each feed's outcome (failures keep the previous data)."""

    report: RefreshReport | None  # None: another refresh of the store was doing the work
    store_path: str
    skipped: tuple[str, ...] = ()  # sources not available here, and why
    busy: str | None = None  # why this refresh did not run (another one holds the lock)

    @property
    def ok(self) -> bool:
        return self.report is None or self.report.ok

    def to_json(self) -> dict[str, Any]:
        if self.report is None:
            return {"ok": True, "skipped": self.busy, "feeds": [], "store": self.store_path}
        return {**self.report.to_json(), "store": self.store_path}


def prices_refresh(q: PricesRefresh, progress_for: Callable[[PriceSource], Any] | None = None,
                   ) -> RefreshAnswer:
    """Fetch prices from every source (or those asked) into the store."""
    st = store(q.store)
    ensure_shipped(st)
    skipped = []
    if q.source:
        sources = [get_source(name, st) for name in q.source]
        for s in sources:
            why = s.available()
            if why:
                raise InputError(f"price source {s.name!r}: {why}")
    else:
        sources = []
        for s in all_sources(st):
            why = s.available()
            if why:
                skipped.append(f"skipping {s.name}: {why}")
            else:
                sources.append(s)
    try:
        report = refresh(sources, st, force=q.force, progress_for=progress_for,
                         wait_s=parse_duration(q.wait))
    except RefreshBusy as busy:  # another refresh is doing the work: not a failure
        return RefreshAnswer(None, str(st.path), tuple(skipped), str(busy))
    return RefreshAnswer(report, str(st.path), tuple(skipped))


@dataclass(frozen=True)
class ImportAnswer:
    """``whichgpu prices import``: the snapshot stored from a file."""

    outcome: FeedOutcome
    file: str

    def to_json(self) -> dict[str, Any]:
        return self.outcome.to_json()


def prices_import(q: PricesImport) -> ImportAnswer:
    """Store your own offers as a dated snapshot."""
    outcome = import_file(Path(q.file), name=q.name, observed_at=q.observed_at, force=q.force,
                          store=Path(q.store) if q.store else None)
    return ImportAnswer(outcome, q.file)


@dataclass(frozen=True)
class SourcesAnswer:
    """``whichgpu prices sources``: every source, its feeds, their age, the last problem."""

    store_path: str
    schema_version: int
    sources: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store_path, "schema_version": self.schema_version,
                "sources": self.sources}


def prices_sources(q: PricesSources) -> SourcesAnswer:
    """Every price source, its feeds and their age, and each one's last problem."""
    st = store(q.store)
    ensure_shipped(st)
    now = utc_now()
    current = st.current()
    last = st.last_attempts()
    rows: list[tuple[str, str, bool, str, str | None]] = []
    listed = set()
    for src in all_sources(st):
        rows.append((src.name, src.kind, src.network, src.describe(), src.available()))
        listed.add(src.name)
    for snap in current:  # imported files
        if snap.source not in listed:
            rows.append((snap.source, snap.kind, False, "imported file", None))
            listed.add(snap.source)
    data = []
    for name, kind, network, describe, why in rows:
        feeds = [s for s in current if s.source == name]
        problems = [s for s in last.values() if s.source == name and s.status != "ok"]
        data.append({
            "name": name, "kind": kind, "network": network, "description": describe,
            "unavailable": why,
            "feeds": [{**s.to_json(), "age_s": (now - s.observed_at).total_seconds()
                       if s.observed_at else None,
                       "unmapped": [u.to_json() for u in st.unmapped(s.id)] if q.unmapped
                       else None} for s in feeds],
            "last_problems": [p.to_json() for p in problems]})
    return SourcesAnswer(str(st.path), st.schema_version(), data)


_SOURCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def sources_add(q: SourcesAdd) -> str:
    """Register a URL price source; returns the store's path."""
    if not _SOURCE_NAME.fullmatch(q.name):
        raise InputError(f"source name {q.name!r}: use letters, digits, '.', '_' and '-'")
    st = store(q.store)
    taken = set(builtin_sources()) | {s.feed for s in st.current() if s.source != q.name}
    if q.name in taken:
        raise InputError(f"{q.name!r} is already a source or feed; choose another name")
    check_url(q.url, q.allow_http)
    st.add_url_source(q.name, q.url, q.allow_http)
    return str(st.path)


def sources_remove(q: SourcesRemove) -> None:
    """Forget a URL source (its stored snapshots stay, as history)."""
    st = store(q.store)
    if not st.remove_url_source(q.name):
        raise NotFoundError("URL source", q.name, [n for n, _, _ in st.url_sources()])


@dataclass(frozen=True)
class PruneAnswer:
    removed: int
    store_path: str


def prices_prune(q: PricesPrune) -> PruneAnswer:
    """Delete old snapshots, keeping the newest per feed (and every current one)."""
    st = store(q.store)
    return PruneAnswer(st.prune(q.keep), str(st.path))


@dataclass(frozen=True)
class RemoveAnswer:
    feed: str
    deleted: int
    store_path: str

    def to_json(self) -> dict[str, Any]:
        return {"feed": self.feed, "snapshots_deleted": self.deleted, "store": self.store_path}


def prices_remove(q: PricesRemove) -> RemoveAnswer:
    """Undo 'prices import': delete an imported feed and its snapshots."""
    st = store(q.store)
    return RemoveAnswer(q.feed, remove_import(q.feed, store=st), str(st.path))
