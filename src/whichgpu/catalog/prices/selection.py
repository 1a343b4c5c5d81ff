"""The one entry point for prices: :func:`current_offers`, with their age and warnings.

``current_offers()`` gives **the market**: the latest good snapshot of every dated feed in the
store except the articles' example sets (the shipped SkyPilot catalog snapshot seeds it, so a
fresh install works offline; refreshes and imports join it). Where two feeds price the same
provider (a gpuhunt refresh and the SkyPilot snapshot of RunPod), the newer one is used.
``current_offers("NAME")`` pins a feed, a source (``shipped`` = the article sets), a snapshot
(``NAME@ID`` or ``NAME@2026-11-12``) or an offer file.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from whichgpu.catalog.offers import Offer, load_offer_set, shipped_offer_sets
from whichgpu.catalog.prices.sources import iso, parse_time, utc_now
from whichgpu.catalog.prices.store import PriceStore, Snapshot, StoreError, oldest_observation
from whichgpu.errors import DataError, InputError, NotFoundError
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.units import Age, Money, format_age

DEFAULT_MAX_AGE_DAYS = 30.0
MAX_AGE_ENV = "WHICHGPU_PRICE_MAX_AGE_DAYS"
DAY = 86400.0

#: ``convert(money, currency) -> Money`` (the cost package's exchange rates).
Converter = Callable[[Money, str], Money]
#: ``said(from_currencies, to_currency, prices_of) -> Message``: the rates a conversion used,
#: their date, against the day the converted prices were observed (None: not known)
RatesSaid = Callable[[list[str], str, date | None], Message]


def _newest_day(offers: tuple[Offer, ...], currency: str) -> date | None:
    """The newest day an offer not in ``currency`` was observed (None: none dated)."""
    days = []
    for o in offers:
        if o.price_per_hour.currency != currency and o.observed_at:
            try:
                days.append(date.fromisoformat(o.observed_at[:10]))
            except ValueError:  # an observation that is not a date: not counted
                continue
    return max(days, default=None)


def default_max_age_days() -> float:
    """The staleness threshold: ``$WHICHGPU_PRICE_MAX_AGE_DAYS`` or 30 days."""
    text = os.environ.get(MAX_AGE_ENV)
    if not text:
        return DEFAULT_MAX_AGE_DAYS
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{MAX_AGE_ENV}={text!r} is not a number of days") from None
    if value <= 0:
        raise InputError(f"{MAX_AGE_ENV} must be positive, got {text!r}")
    return value




@dataclass(frozen=True)
class FeedInfo:
    """Where a group of offers comes from and how old they are."""

    feed: str
    source: str
    kind: str
    offer_count: int
    snapshot_id: int | None  # None: read directly (an offer file, or the shipped fallback)
    fetched_at: datetime | None
    observed_at: datetime | None  # the oldest offer's observation time
    age_s: float | None  # None: undated
    stale: bool
    version: str | None = None

    @property
    def undated(self) -> bool:
        return self.age_s is None

    @property
    def age_text(self) -> str:
        return format_age(self.age_s)

    def to_json(self) -> dict[str, Any]:
        return {"feed": self.feed, "source": self.source, "kind": self.kind,
                "offer_count": self.offer_count, "snapshot_id": self.snapshot_id,
                "fetched_at": iso(self.fetched_at) if self.fetched_at else None,
                "observed_at": iso(self.observed_at) if self.observed_at else None,
                "age_s": round(self.age_s) if self.age_s is not None else None,
                "stale": self.stale, "undated": self.undated, "version": self.version}


@dataclass(frozen=True)
class OfferSelection:
    """Offers, the feeds they come from (with age), and warnings to show the user."""

    offers: tuple[Offer, ...]
    feeds: tuple[FeedInfo, ...]
    warnings: tuple[str, ...]
    requested: str | None
    max_age_s: float
    now: datetime
    store_path: str | None = None
    narrowed: str | None = None  # how the store's read was narrowed (None: every offer)

    def feed(self, name: str | None) -> FeedInfo | None:
        return next((f for f in self.feeds if f.feed == name), None)

    def age_s(self, offer: Offer) -> float | None:
        """How long ago this offer's price was observed (None: undated)."""
        t = parse_time(offer.observed_at)
        return (self.now - t).total_seconds() if t else None

    def is_stale(self, offer: Offer) -> bool:
        age = self.age_s(offer)
        return age is None or age > self.max_age_s

    def currencies(self) -> list[str]:
        return sorted({o.price_per_hour.currency for o in self.offers})

    def main_currency(self) -> str | None:
        """The currency most offers are in (None without offers)."""
        counts = Counter(o.price_per_hour.currency for o in self.offers)
        return min(counts, key=lambda c: (-counts[c], c)) if counts else None

    @cached_property
    def by_gpu(self) -> dict[str, tuple[Offer, ...]]:
        """The offers of each GPU (built once per selection; answers touch only their GPUs)."""
        index: dict[str, list[Offer]] = defaultdict(list)
        for o in self.offers:
            index[o.gpu].append(o)
        return {g: tuple(v) for g, v in index.items()}

    def for_gpu(self, *gpu_ids: str) -> list[Offer]:
        index = self.by_gpu
        return [o for g in dict.fromkeys(gpu_ids) for o in index.get(g, ())]

    def sources(self) -> list[str]:
        """The sources the offers come from (several: the output says prices are mixed)."""
        return sorted({f.source for f in self.feeds})

    def public(self) -> OfferSelection:
        """This selection without the store's path, for answers to visitors of the web app."""
        return replace(self, store_path=None, warnings=tuple(
            w.replace(self.store_path, "the server's price store") if self.store_path else w
            for w in self.warnings))

    def cheapest(self, gpu_id: str, *, spot: bool | None = None,
                 currency: str | None = None) -> Offer | None:
        """The cheapest per-GPU-hour offer of one GPU. Prices in several currencies are
        never compared: pass ``currency`` (or convert first with :meth:`in_currency`)."""
        pool = [o for o in self.for_gpu(gpu_id) if (spot is None or o.spot == spot)
                and (currency is None or o.price_per_hour.currency == currency)]
        if len({o.price_per_hour.currency for o in pool}) > 1:
            raise InputError(msg("prices.currencies", "offers for {gpu} are in {currencies}; "
                                 "choose a currency ({flag}) to compare them", gpu=gpu_id,
                                 currencies=", ".join(self.currencies()),
                                 flag=Field("currency")))
        return min(pool, key=lambda o: o.price_per_gpu_hour.amount, default=None)

    def sorted(self) -> list[Offer]:
        """Cheapest per GPU-hour first, within each currency (currencies are not compared)."""
        return sorted(self.offers, key=lambda o: (o.price_per_hour.currency,
                                                  o.price_per_gpu_hour.amount, o.gpu))

    def in_currency(self, currency: str, convert: Converter | None = None,
                    rates_said: RatesSaid | None = None) -> OfferSelection:
        """Every offer in ``currency``: converted with ``convert`` when given, otherwise the
        offers in other currencies are left out, and a warning says how many. ``rates_said``
        says the rates a conversion used and how old they are (the warning names them)."""
        keep: list[Offer] = []
        other: Counter[str] = Counter()
        converted: Counter[str] = Counter()
        for o in self.offers:
            if o.price_per_hour.currency == currency:
                keep.append(o)
            elif convert is not None:
                new = convert(o.price_per_hour, currency)
                note = f"converted from {o.price_per_hour}" + (f"; {o.note}" if o.note else "")
                keep.append(o.model_copy(update={"price_per_hour": new, "note": note}))
                converted[o.price_per_hour.currency] += 1
            else:
                other[o.price_per_hour.currency] += 1
        warnings = list(self.warnings)
        if converted:
            done = Join(msg("prices.n_from", "{n} from {currency}", n=n, currency=c)
                        for c, n in sorted(converted.items()))
            warnings.append(msg("prices.converted", "{done} converted to {currency} at the "
                                "dated exchange rates ({flag} to override)", done=done,
                                currency=currency, flag=Field("rate")) if rates_said is None
                            else msg("prices.converted.at", "{done} converted to {currency} "
                                     "at {rates}", done=done, currency=currency,
                                     rates=rates_said(sorted(converted), currency,
                                                      _newest_day(self.offers, currency))))
        if other:
            left = Join(msg("prices.n_in", "{n} in {currency}", n=n, currency=c)
                        for c, n in sorted(other.items()))
            warnings.append(msg("prices.left_out", "{left} left out: prices are shown in "
                                "{currency} only, and this build has no exchange rates to "
                                "convert them", left=left, currency=currency))
        return replace(self, offers=tuple(keep), warnings=tuple(warnings))

    def to_json(self) -> dict[str, Any]:
        """Provenance for a result's JSON: feeds with their age, warnings, the threshold."""
        return {"requested": self.requested, "store": self.store_path,
                "narrowed": self.narrowed, "offers_read": len(self.offers),
                "max_age_s": self.max_age_s, "currencies": self.currencies(),
                "sources": self.sources(), "mixed": len(self.sources()) > 1,
                "feeds": [f.to_json() for f in self.feeds], "warnings": list(self.warnings)}


# ------------------------------------------------------------------------ building one

def open_store(store: PriceStore | str | Path | None = None) -> PriceStore:
    return store if isinstance(store, PriceStore) else PriceStore(store)


def ensure_shipped(store: PriceStore, current: list[Snapshot] | None = None) -> None:
    """Seed the store with the shipped article sets and the shipped market snapshot (first
    use, or a new package version's data). A shipped market feed never replaces a newer
    snapshot of the same feed (a refresh made after the package was built)."""
    from whichgpu.catalog.prices.market import MarketSnapshotSource, market_feeds
    from whichgpu.catalog.prices.shipped import ShippedSource, shipped_digest

    snaps = {s.feed: s for s in (store.current() if current is None else current)}
    stale = [n for n in shipped_offer_sets()
             if (snaps[n].digest if n in snaps else None) != shipped_digest(n)]
    if stale:
        from whichgpu.catalog.prices.refresh import record  # only a new feed is recorded

        for result in ShippedSource(stale).fetch():
            record(store, result, skip_unchanged=True)
    newer = []
    for f in market_feeds():
        have = snaps.get(f.feed)
        if have is not None and (have.digest == f.digest or (
                have.observed_at and f.observed_at and have.observed_at >= f.observed_at
                and have.kind == "skypilot" and have.version != f.meta.get("version"))):
            continue
        newer.append(f.feed)
    if newer:
        from whichgpu.catalog.prices.refresh import record  # only a new feed is recorded

        for result in MarketSnapshotSource(newer).fetch():
            record(store, result, skip_unchanged=True, force=True)
    from whichgpu.catalog.prices.published import ensure_published

    ensure_published(store, list(snaps.values()))


def _info(snap: Snapshot, now: datetime, max_age_s: float) -> FeedInfo:
    age = (now - snap.observed_at).total_seconds() if snap.observed_at else None
    return FeedInfo(snap.feed, snap.source, snap.kind, snap.offer_count, snap.id,
                    snap.fetched_at, snap.observed_at, age, age is None or age > max_age_s,
                    snap.version)


def _direct_info(feed: str, source: str, kind: str, offers: list[Offer], now: datetime,
                 max_age_s: float) -> FeedInfo:
    observed = oldest_observation(offers)
    age = (now - observed).total_seconds() if observed else None
    return FeedInfo(feed, source, kind, len(offers), None, None, observed, age,
                    age is None or age > max_age_s)


def _pick(store: PriceStore, prices: str) -> list[Snapshot]:
    """The snapshots ``prices`` names: a feed, a source, ``NAME@ID`` or ``NAME@DATE``."""
    name, _, at = prices.partition("@")
    current = store.current()
    if not at:
        chosen = [s for s in current if s.feed == name] or \
            [s for s in current if s.source == name]
        return chosen
    candidates = [s for s in store.snapshots(status="ok") if name in (s.feed, s.source)]
    if at.isdigit():
        found = [s for s in candidates if s.id == int(at)]
        if not found:
            raise InputError(msg("prices.no_snapshot_id", "no good snapshot {at} of {name!r}; "
                                 "'whichgpu prices history' and 'whichgpu prices sources' show "
                                 "the snapshots", at=at, name=name))
        return found
    when = parse_time(at)
    if when is None:
        raise InputError(msg("prices.at", "{v!r}: after @ give a snapshot id or a date "
                             "(2026-11-12)", v=prices))
    end = when + timedelta(days=1) if len(at.strip()) == 10 else when
    latest: dict[str, Snapshot] = {}
    for s in candidates:  # newest first
        if s.fetched_at < end and s.feed not in latest:
            latest[s.feed] = s
    if not latest:
        raise InputError(msg("prices.no_snapshot_by", "no good snapshot of {name!r} was stored "
                             "by {at}", name=name, at=at))
    return sorted(latest.values(), key=lambda s: s.feed)


def _unusable(snaps: list[Snapshot], composition: dict[int, set[tuple[str, str]]],
              warnings: list[str]) -> list[Snapshot]:
    """Leave out a stored feed no command could use (a currency without an exchange rate,
    stored before imports were validated): one bad feed never breaks everyone's prices."""
    from whichgpu.catalog.prices.validate import known_currency

    keep = []
    for s in snaps:
        bad = sorted({cur for _, cur in composition.get(s.id, ()) if not known_currency(cur)})
        if bad:
            warnings.append(f"{s.feed}: left out, its prices are in {', '.join(bad)}, which has "
                            f"no exchange rate (re-import it in a known currency, or 'whichgpu "
                            f"prices remove {s.feed}')")
        else:
            keep.append(s)
    return keep


def is_market(snap: Snapshot) -> bool:
    """Whether a feed is part of the default prices: dated, not an article's example set and
    not a published history point (a 2024 market level is no offer to rent today)."""
    return (snap.kind not in ("shipped", "history") and snap.feed not in shipped_offer_sets()
            and snap.observed_at is not None)


@cache
def _provider_key(name: str) -> str:
    """One key per provider whatever the feed calls it ('Lambda', 'lambdalabs' -> 'lambda')."""
    from whichgpu.catalog.prices.names import provider_key
    from whichgpu.catalog.prices.providers import providers

    key = provider_key(name)
    for p in providers().values():
        if key in (provider_key(p.key), provider_key(p.name), provider_key(p.gpuhunt or "")):
            return p.key
    return key


def _superseded(snaps: list[Snapshot], composition: dict[int, set[tuple[str, str]]]
                ) -> tuple[set[tuple[int, str]], list[str]]:
    """Where several feeds price one provider, the newest feed's offers of it are used: the
    ``(snapshot id, provider)`` pairs to leave out, and a note per provider."""
    when = {s.id: (s.observed_at or datetime.min.replace(tzinfo=UTC), s.feed) for s in snaps}
    feed = {s.id: s.feed for s in snaps}
    by_provider: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for sid, pairs in composition.items():
        for prov, _ in pairs:
            by_provider[_provider_key(prov)][sid].add(prov)
    skip: set[tuple[int, str]] = set()
    notes = []
    for key, holders in sorted(by_provider.items()):
        if len(holders) < 2:
            continue
        winner = max(holders, key=lambda sid: when[sid])
        losers = sorted(feed[sid] for sid in holders if sid != winner)
        skip |= {(sid, prov) for sid, provs in holders.items() if sid != winner
                 for prov in provs}
        notes.append(f"{', '.join(losers)}: {key} prices superseded by the newer "
                     f"{feed[winner]}")
    return skip, notes


def current_offers(prices: str | None = None, *, store: PriceStore | str | Path | None = None,
                   max_age_days: float | None = None, now: datetime | None = None,
                   gpus: list[str] | tuple[str, ...] | None = None,
                   cheapest_only: bool = False) -> OfferSelection:
    """The offers to price a job with, and how old they are.

    ``prices``: None = the market: the latest good snapshot of every dated feed in the store
    except the articles' example sets (``article-000``, ``vramfarm-2026-11``), newest feed
    per provider; a feed ("vramfarm-2026-11", "skypilot/runpod", "gpuhunt/aws"), a source
    ("skypilot", "gpuhunt", "shipped" = the article sets), ``NAME@SNAPSHOT_ID`` or
    ``NAME@DATE`` (the snapshot current on that date), or the path of an offer file (read
    directly, not stored). Feeds older than ``max_age_days`` (default 30,
    ``$WHICHGPU_PRICE_MAX_AGE_DAYS``) or undated get a warning.

    ``gpus`` reads only those GPUs' offers; ``cheapest_only`` keeps one offer per GPU, GPU
    count, currency, spot and billing rule, the cheapest (the only one a cost-minimising answer
    can pick): both are done by the store's query, so a priced answer reads only what it can
    use, however large the store. ``narrowed`` in the JSON says which was applied.
    """
    now = (now or utc_now()).astimezone(UTC)
    max_age_s = (max_age_days if max_age_days is not None else default_max_age_days()) * DAY
    warnings: list[str] = []
    try:
        st = open_store(store)
        current = st.current()
        ensure_shipped(st, current)
        if prices is None:
            snaps = [s for s in st.current() if is_market(s)]
        else:
            snaps = _pick(st, prices)
        if snaps:
            composition = st.composition(s.id for s in snaps)
            snaps = _unusable(snaps, composition, warnings)
            skip: set[tuple[int, str]] = set()
            if prices is None:
                skip, notes = _superseded(snaps, {s.id: composition[s.id] for s in snaps})
                warnings += notes
            snaps, offers = st.read([s.id for s in snaps], gpus=gpus,
                                    cheapest_only=cheapest_only, skip=skip)
            if cheapest_only:
                offers = undominated(offers)
            feeds = [_info(s, now, max_age_s) for s in snaps]
            warnings += st.problems(snaps) + _failure_warnings(st, snaps)
            return _finish(offers, feeds, warnings, prices, max_age_s, now, st.location,
                           _narrowed(gpus, cheapest_only))
    except (StoreError, DataError, sqlite3.Error, OSError) as exc:
        if prices is not None and prices not in (*shipped_offer_sets(), "shipped",
                                                 "skypilot") and not _is_file(prices):
            raise
        reason = exc.reason if isinstance(exc, StoreError) else str(exc)
        warnings.append(f"the price store cannot be used ({reason}); using the prices "
                        "shipped with whichgpu only")
        st = None
    return _without_store(prices, st, warnings, max_age_s, now, gpus, cheapest_only)


def _narrowed(gpus: list[str] | tuple[str, ...] | None, cheapest_only: bool) -> str | None:
    """How a selection was narrowed, said in its JSON (None: every offer)."""
    parts = []
    if gpus is not None:
        parts.append("only " + (", ".join(sorted(set(gpus))) or "no GPU"))
    if cheapest_only:
        parts.append("the cheapest offer per GPU, GPU count, currency, spot and billing rule, "
                     "less those a cheaper offer with a finer billing rule beats for any run")
    return "; ".join(parts) or None


def narrow(offers: list[Offer], gpus: list[str] | tuple[str, ...] | None,
           cheapest_only: bool) -> list[Offer]:
    """:meth:`PriceStore.read`'s ``gpus`` and ``cheapest_only`` on offers already in memory
    (the shipped files, an offer file): the same offers the store's query keeps."""
    if gpus is not None:
        wanted = set(gpus)
        offers = [o for o in offers if o.gpu in wanted]
    if not cheapest_only:
        return list(offers)
    best: dict[tuple, Offer] = {}
    for o in offers:  # the first of equal prices wins, as in the store's query
        key = (o.gpu, o.gpu_count, o.price_per_hour.currency, o.spot, o.billing.increment_s,
               o.billing.minimum_s)
        if key not in best or o.price_per_hour.amount < best[key].price_per_hour.amount:
            best[key] = o
    return undominated(list(best.values()))


def _dominates(a: Offer, b: Offer) -> bool:
    """``a`` costs no more than ``b`` for a run of any length: same GPU, count, currency and
    spot, a price no higher, a minimum no longer, and a billing step that divides ``b``'s
    (a step that does not divide can round a run up further: 40 s steps bill 41 s as 80 s,
    60 s steps as 60 s)."""
    ra, rb = a.billing, b.billing
    step = rb.increment_s / ra.increment_s
    return (a.price_per_hour.amount <= b.price_per_hour.amount
            and ra.minimum_s <= rb.minimum_s and step >= 1 and abs(step - round(step)) < 1e-9)


def undominated(offers: list[Offer]) -> list[Offer]:
    """The offers no other offer of the same kind beats for every job (see
    :func:`_dominates`): an offer under a coarser billing rule that is not cheaper either can
    never be the one a job is priced on. Ties keep the first."""
    groups: dict[tuple, list[Offer]] = defaultdict(list)
    for o in offers:
        groups[(o.gpu, o.gpu_count, o.price_per_hour.currency, o.spot)].append(o)
    keep = []
    for group in groups.values():
        for i, o in enumerate(group):
            if not any(_dominates(p, o) and (j < i or not _dominates(o, p))
                       for j, p in enumerate(group) if j != i):
                keep.append(o)
    return keep


def _is_file(prices: str) -> bool:
    from whichgpu.user_files import stat_path

    p = Path(prices)
    return p.suffix.lower() in (".csv", ".json") or stat_path(p) is not None


def _without_store(prices: str | None, st: PriceStore | None, warnings: list[str],
                   max_age_s: float, now: datetime,
                   gpus: list[str] | tuple[str, ...] | None = None,
                   cheapest_only: bool = False) -> OfferSelection:
    """Shipped sets read from the package, or an offer file read directly."""
    from whichgpu.catalog.prices.file import FileSource
    from whichgpu.catalog.prices.market import market_feeds

    names = shipped_offer_sets()
    how = _narrowed(gpus, cheapest_only)

    def finish(offers: list[Offer], feeds: list[FeedInfo]) -> OfferSelection:
        return _finish(narrow(offers, gpus, cheapest_only), feeds, warnings, prices,
                       max_age_s, now, None, how)

    if prices is None or prices == "skypilot":  # the shipped market snapshot
        offers: list[Offer] = []
        feeds: list[FeedInfo] = []
        for f in market_feeds():
            offers += f.offers
            feeds.append(_direct_info(f.feed, "skypilot", "skypilot", list(f.offers), now,
                                      max_age_s))
        return finish(offers, feeds)
    if prices in names or prices == "shipped":
        chosen = names if prices == "shipped" else [prices]
        offers, feeds = [], []
        for n in chosen:
            group = list(load_offer_set(n))
            offers += group
            feeds.append(_direct_info(n, "shipped", "shipped", group, now, max_age_s))
        return finish(offers, feeds)
    if _is_file(prices):
        (result,) = FileSource(prices).fetch()
        feed = _direct_info(result.feed, "file", "file", result.offers, now, max_age_s)
        return finish(result.offers, [feed])
    known = list(names)
    if st is not None:
        snaps = st.current()
        known = list(dict.fromkeys([*(s.feed for s in snaps), *(s.source for s in snaps),
                                    *names]))
    raise NotFoundError("price source", prices, known,
                        hint=msg("prices.sources_hint.file", "'whichgpu prices sources' lists "
                                 "them; or give an offer file"))


def _failure_warnings(st: PriceStore, snaps: list[Snapshot]) -> list[str]:
    last = st.last_attempts()
    out = []
    for s in snaps:
        attempt = last.get(s.feed)
        if attempt is not None and attempt.id != s.id and attempt.status != "ok":
            out.append(f"{s.feed}: the last refresh {attempt.status} ({attempt.message}); "
                       f"using the snapshot of {iso(s.fetched_at)}")
    return out


def _finish(offers: list[Offer], feeds: list[FeedInfo], warnings: list[str],
            prices: str | None, max_age_s: float, now: datetime,
            store_path: str | None, narrowed: str | None = None) -> OfferSelection:
    days = max_age_s / DAY
    sources = sorted({f.source for f in feeds})
    if len(sources) > 1:
        warnings.append(msg("prices.mix", "prices mix {sources}; each offer says which feed it "
                            "comes from", sources=Join(
                                msg("prices.mix.source", "{source} ({n} feed(s))", source=src,
                                    n=sum(1 for f in feeds if f.source == src))
                                for src in sources)))
    for f in feeds:
        if f.undated:
            warnings.append(msg("prices.undated", "{feed}: these prices carry no observation "
                                "date; treat them as examples and check today's prices before "
                                "a big job", feed=f.feed))
        elif f.stale and f.observed_at is not None and f.age_s is not None:
            stale = dict(feed=f.feed, age=Age(f.age_s), date=f"{f.observed_at:%Y-%m-%d}",
                         days=days)
            warnings.append(
                msg("prices.stale.shipped", "{feed}: prices observed {age} ago ({date}), older "
                    "than {days:g} days (shipped with whichgpu)", **stale)
                if f.kind == "shipped" else
                msg("prices.stale", "{feed}: prices observed {age} ago ({date}), older than "
                    "{days:g} days (run 'whichgpu prices refresh')", **stale))
    return OfferSelection(tuple(offers), tuple(feeds), tuple(warnings), prices, max_age_s, now,
                          store_path, narrowed)


def get_offers(prices: str | None = None) -> list[Offer]:
    """Offers from the price store as a list: ``None`` = the latest of every source (shipped
    sets included); else a source, feed, shipped set or offer file. Ages and staleness
    warnings come with :func:`current_offers`, which this delegates to."""
    return list(current_offers(prices).offers)
