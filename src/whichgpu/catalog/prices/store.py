"""The price store: one dated snapshot per feed per refresh, in SQLite or PostgreSQL.

* Every fetch is recorded as a ``snapshot`` row: ``ok`` (with its offers), ``failed`` or
  ``rejected`` (with the reason, and no offers). Nothing is ever overwritten.
* ``current`` points each feed at its latest good snapshot. A new snapshot and its offers
  are inserted and the pointer moved in one transaction, so readers see the old snapshot or
  the new one, never half of one; a whole refresh is one transaction (:meth:`PriceStore.commit`).
* Readers never wait for a writer (SQLite's WAL, PostgreSQL's MVCC), and a refresh holds the
  write transaction only for its final inserts, not while it downloads.
* The schema is versioned (:mod:`~whichgpu.catalog.prices.schema`): migrations are applied
  on first use, once even when several processes start together, and a store from a newer
  whichgpu is refused rather than damaged.

Where the store lives (``WHICHGPU_DATABASE_URL``, ``WHICHGPU_PRICE_STORE``) and what differs
between the engines: :mod:`~whichgpu.catalog.prices.backends`. The SQL here is shared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Literal

from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices.backends import (
    DATABASE_URL_ENV,
    STORE_ENV,
    STORE_FILE,
    Backend,
    RefreshBusy,
    StoreError,
    Tx,
    default_store_path,
    parse_target,
)
from whichgpu.catalog.prices.backends.open import open_backend
from whichgpu.catalog.prices.backends.sqlite import store_error
from whichgpu.catalog.prices.schema import MIGRATIONS
from whichgpu.catalog.prices.sources import FeedResult, Unmapped, iso, parse_time, utc_now
from whichgpu.catalog.prices.validate import (
    FUTURE_TOLERANCE_S,
    MAX_BILLING_S,
    MAX_USD_PER_GPU_HOUR,
    MIN_USD_PER_GPU_HOUR,
)
from whichgpu.currency import default_rates
from whichgpu.errors import DataError
from whichgpu.units import Money

__all__ = [
    "DATABASE_URL_ENV", "MIGRATIONS", "STORE_ENV", "STORE_FILE", "HistoryPoint",
    "PendingWrite", "PriceStore", "RefreshBusy", "Snapshot", "StoreError",
    "default_store_path", "oldest_observation", "store_error",
]


@dataclass(frozen=True)
class Snapshot:
    """One recorded fetch of one feed."""

    id: int
    feed: str
    source: str
    kind: str
    status: str  # ok | failed | rejected
    fetched_at: datetime
    observed_at: datetime | None  # the oldest offer's observation time (None: some undated)
    version: str | None
    digest: str | None
    offer_count: int
    unmapped_count: int
    skipped: dict[str, int]
    message: str | None
    source_rows: int | None = None  # GPU rows of the upstream file (None: not counted)
    #: What reading it left out or could not read (a malformed stored value, implausible
    #: offers), each naming the feed: said as a warning wherever its prices are used.
    problems: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "feed": self.feed, "source": self.source, "kind": self.kind,
                "status": self.status, "fetched_at": iso(self.fetched_at),
                "observed_at": iso(self.observed_at) if self.observed_at else None,
                "version": self.version, "offer_count": self.offer_count,
                "unmapped_count": self.unmapped_count, "skipped": self.skipped,
                "source_rows": self.source_rows, "message": self.message,
                "problems": list(self.problems)}


@dataclass(frozen=True)
class HistoryPoint:
    """The prices of one GPU in one snapshot (per GPU-hour, one currency, spot or not)."""

    snapshot_id: int
    feed: str
    fetched_at: datetime
    observed_at: datetime | None
    gpu: str
    spot: bool
    cheapest: Money
    median: Money
    offers: int
    cheapest_provider: str
    source: str | None = None  # where the cheapest price comes from (a URL, a catalog file)

    def to_json(self) -> dict[str, Any]:
        return {"snapshot_id": self.snapshot_id, "feed": self.feed,
                "fetched_at": iso(self.fetched_at),
                "observed_at": iso(self.observed_at) if self.observed_at else None,
                "gpu": self.gpu, "spot": self.spot,
                "cheapest_per_gpu_hour": self.cheapest.to_json(),
                "median_per_gpu_hour": self.median.to_json(), "offers": self.offers,
                "cheapest_provider": self.cheapest_provider, "source": self.source}


_SNAPSHOT_COLS = ("id, feed, source, kind, status, fetched_at, observed_at, version, digest, "
                  "offer_count, unmapped_count, skipped, message, source_rows")
_OFFER_COLS = ("provider, gpu, gpu_count, price_per_hour, currency, billing_increment_s, "
               "billing_minimum_s, spot, region, observed_at, source, note, instance_type")


#: What makes two offers the same kind for ``cheapest_only``: a cheaper one of the same kind
#: costs less for any job.
_KIND = "gpu, gpu_count, spot, currency, billing_increment_s, billing_minimum_s"


def _count(value: object) -> int | None:
    """A stored count, if it is one (a whole number >= 0; a float NaN, text or a negative
    is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if value >= 0 else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _skipped(text: object) -> dict[str, int] | None:
    """A snapshot's ``skipped`` column (JSON: reason -> rows), or None when it is not that."""
    if text is None or text == "":
        return {}
    try:
        data = json.loads(text) if isinstance(text, str | bytes) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or any(
            not isinstance(k, str) or _count(v) is None for k, v in data.items()):
        return None
    return {k: int(v) for k, v in data.items()}


def _snapshot(row: tuple) -> Snapshot:
    """A snapshot from a stored row, read as strictly as it was written: a malformed value
    (another tool's write, a hand edit, a damaged file) is replaced by a neutral one and
    named in :attr:`Snapshot.problems`, never raised, so one bad row cannot break every
    command (nor the import that would replace it)."""
    (id_, feed, source, kind, status, fetched, observed, version, digest, count, unmapped,
     skipped, message, source_rows) = row
    feed = _text(feed) or f"snapshot {id_}"
    problems = []
    skip = _skipped(skipped)
    if skip is None:
        problems.append(f"{feed}: the stored count of skipped rows (snapshot {id_}) cannot "
                        "be read, so it is left out; the offers are read as usual")
        skip = {}
    bad = [name for name, value, ok in (
        ("offer_count", count, _count(count) is not None),
        ("unmapped_count", unmapped, _count(unmapped) is not None),
        ("source_rows", source_rows, source_rows is None or _count(source_rows) is not None),
        ("fetched_at", fetched, parse_time(_text(fetched)) is not None)) if not ok]
    if bad:
        problems.append(f"{feed}: stored {', '.join(bad)} of snapshot {id_} cannot be read "
                        "and was left out")
    return Snapshot(id_, feed, _text(source) or "unknown", _text(kind) or "unknown",
                    _text(status) or "unknown", parse_time(_text(fetched)) or utc_now(),
                    parse_time(_text(observed)), _text(version), _text(digest),
                    _count(count) or 0, _count(unmapped) or 0, skip, _text(message),
                    _count(source_rows), tuple(problems))


_EVERY_FIELD = set(Offer.model_fields)  # a stored offer sets them all: one shared set
_RULES: dict[tuple[float, float], BillingRule] = {}  # the few rules there are, built once
_MAX_RULES = 4096


def _rule(increment_s: float, minimum_s: float) -> BillingRule:
    rule = _RULES.get((increment_s, minimum_s))
    if rule is None:
        rule = BillingRule.model_construct(increment_s=increment_s, minimum_s=minimum_s)
        if len(_RULES) < _MAX_RULES:
            _RULES[(increment_s, minimum_s)] = rule
    return rule


@cache
def _plausible() -> tuple[str, tuple[Any, ...]]:
    """A SQL condition an offer row must meet to be read, and its arguments: the import's
    plausibility checks (:mod:`~whichgpu.catalog.prices.validate`) in SQL, so that a row
    stored before them, or written by hand (a $1e-300 price, a NaN billing step: the
    table's CHECKs are looser), is never read, and never hides a real offer from
    ``cheapest_only``'s pick. PostgreSQL orders NaN above every number, and SQLite stores it
    as NULL, so a NaN fails these comparisons on both."""
    rates = default_rates()
    per_currency, args = [], []
    for cur in sorted(rates.currencies(), key=lambda c: (c != "USD", c)):
        usd = rates.rate(cur, "USD")
        per_currency.append("(currency = ? AND price_per_hour >= ? * gpu_count AND "
                            "price_per_hour <= ? * gpu_count)")
        args += [cur, MIN_USD_PER_GPU_HOUR / usd, MAX_USD_PER_GPU_HOUR / usd]
    sql = (f"(gpu_count >= 1 AND gpu_count <= {MAX_GPUS_PER_OFFER} AND "
           f"billing_increment_s > 0 AND billing_increment_s <= {MAX_BILLING_S!r} AND "
           f"billing_minimum_s >= 0 AND billing_minimum_s <= {MAX_BILLING_S!r} AND "
           f"({' OR '.join(per_currency)}))")
    return sql, tuple(args)


def _plausible_now(observed: str = "observed_at") -> tuple[str, list[Any]]:
    """:func:`_plausible` and, as the import checks, no observation date in the future (ISO
    text compares in time order; a damaged date, letters where digits belong, sorts after
    every date and is left out with it)."""
    sql, args = _plausible()
    cutoff = iso(utc_now() + timedelta(seconds=FUTURE_TOLERANCE_S))
    return f"({sql} AND ({observed} IS NULL OR {observed} <= ?))", [*args, cutoff]


#: The most GPUs one stored offer may rent together (the largest real offers are 8-16; a
#: rack of 72 is sold as 72 GPUs): more is a damaged row.
MAX_GPUS_PER_OFFER = 1024


def _row_ok(row: tuple) -> bool:
    """Whether a stored offer row has the types it was written with (SQLite keeps whatever a
    hand edit puts in a column)."""
    (provider, gpu, count, price, currency, inc, minimum, spot, region, observed, source,
     note, instance_type) = row
    return (isinstance(provider, str) and isinstance(gpu, str) and isinstance(currency, str)
            and isinstance(count, int) and not isinstance(count, bool)
            and all(isinstance(x, int | float) and math.isfinite(x)
                    for x in (price, inc, minimum))
            and spot in (0, 1) and all(x is None or isinstance(x, str) for x in (
                region, observed, source, note, instance_type)))


def _offer(row: tuple, feed: str, pool: dict[str, str] | None = None) -> Offer:
    """An offer from a stored row: validated when stored, so built without re-validation
    (large reads stay fast), its billing rule shared and its repeated strings (``pool``:
    provider, GPU, currency, region, date, source) held once per read."""
    (provider, gpu, count, price, currency, inc, minimum, spot, region, observed, source,
     note, instance_type) = row
    if pool is not None:
        provider, gpu, currency = (pool.setdefault(x, x) for x in (provider, gpu, currency))
        region, observed, source = (x if x is None else pool.setdefault(x, x)
                                    for x in (region, observed, source))
    return Offer.model_construct(
        _EVERY_FIELD, provider=provider, gpu=gpu, gpu_count=count,
        price_per_hour=Money(price, currency), billing=_rule(inc, minimum), spot=bool(spot),
        region=region, instance_type=instance_type, observed_at=observed, source=source,
        offer_set=feed, note=note)


def _left_out(snap: Snapshot, n: int) -> str:
    return (f"{snap.feed}: {n} stored offer(s) of snapshot {snap.id} left out: a price outside "
            "the plausible range, a billing rule that cannot be read, or a damaged value (the "
            "checks an import applies); import or refresh the feed again to replace it")


def oldest_observation(offers: Iterable[Offer]) -> datetime | None:
    """The oldest ``observed_at`` of the offers; None if any is undated (or there are none)."""
    times = [parse_time(o.observed_at) for o in offers]
    dated = [t for t in times if t is not None]
    if not times or len(dated) < len(times):
        return None
    return min(dated)


Status = Literal["ok", "failed", "rejected"]


@dataclass(frozen=True)
class PendingWrite:
    """One snapshot to store: a good fetch (``ok``: its offers become the feed's current
    snapshot; ``only_if_changed``: unless the current one already has the same digest) or a
    problem (``failed`` / ``rejected``: recorded with ``message``, the current one kept)."""

    result: FeedResult
    status: Status = "ok"
    message: str | None = None
    only_if_changed: bool = False


def _offer_row(snap_id: int, seq: int, o: Offer) -> tuple:
    return (snap_id, o.provider, o.gpu, o.gpu_count, o.price_per_hour.amount,
            o.price_per_hour.currency, o.billing.increment_s, o.billing.minimum_s, int(o.spot),
            o.region, o.observed_at, o.source, o.note, o.instance_type, seq)


_OFFER_INSERT = ("snapshot_id", *(c.strip() for c in _OFFER_COLS.split(",")), "seq")
_UNMAPPED_INSERT = ("snapshot_id", "provider", "name", "instance", "memory_gb", "reason",
                    "candidates", "rows")


class PriceStore:
    """A price store: a SQLite file or a PostgreSQL database (see :func:`parse_target`).
    Cheap to create: each operation runs its own transaction (SQLite: its own connection;
    PostgreSQL: one lent by the process's pool), so one object may be used from several
    threads, and several processes (and machines, with PostgreSQL) may share the store."""

    def __init__(self, path: str | Path | None = None, *, timeout_s: float = 30.0) -> None:
        self.target = parse_target(path)
        self.backend: Backend = open_backend(self.target, timeout_s)
        self.timeout_s = timeout_s

    @property
    def location(self) -> str:
        """Where the store is, for people: the file, or the URL without its password."""
        return self.target.location

    @property
    def path(self) -> Path | str:
        """The SQLite file (a Path); for PostgreSQL, :attr:`location`."""
        return self.target.path if self.target.path is not None else self.location

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    def __repr__(self) -> str:
        return f"PriceStore({self.location!r})"

    # -------------------------------------------------------------- transactions

    def _read(self):
        """A read transaction: every query inside sees the same state of the store."""
        return self.backend.read()

    def _write(self):
        """A write transaction: one writer at a time, all or nothing."""
        return self.backend.write()

    def schema_version(self) -> int:
        return self.backend.schema_version()

    def refresh_lock(self, wait_s: float = 0.0):
        """Held for a whole refresh (see :meth:`Backend.refresh_lock`): a second refresh
        waits up to ``wait_s`` seconds, then raises :class:`RefreshBusy` naming the holder."""
        return self.backend.refresh_lock(wait_s)

    # -------------------------------------------------------------- writing

    def save(self, result: FeedResult) -> Snapshot:
        """Record a good fetch and make it the feed's current snapshot, atomically."""
        (snap,) = self.commit([PendingWrite(result)])
        assert snap is not None
        return snap

    def save_if_changed(self, result: FeedResult) -> Snapshot | None:
        """Like :meth:`save`, unless the current snapshot already has this content (same
        digest), checked inside the write transaction: two processes seeding a fresh store
        store it once. None when nothing was stored."""
        return self.commit([PendingWrite(result, only_if_changed=True)])[0]

    def save_problem(self, result: FeedResult, status: str, message: str) -> Snapshot:
        """Record a fetch that failed or was rejected; the current snapshot stays as it is."""
        if status not in ("failed", "rejected"):
            raise ValueError(status)
        (snap,) = self.commit([PendingWrite(result, status, message)])  # type: ignore[arg-type]  # checked above
        assert snap is not None
        return snap

    def commit(self, writes: list[PendingWrite]) -> list[Snapshot | None]:
        """Store every write in one transaction: all of them, or (on any error) none, and
        readers see the store before or after, never between. Per write, the snapshot
        stored (None: ``only_if_changed`` and the content was already current)."""
        ids: list[int | None] = []
        with self._write() as tx:
            for w in writes:
                ids.append(self._store(tx, w))
        if not any(i is not None for i in ids):
            return [None] * len(ids)
        stored = {s.id: s for s in self._snapshots_by_id([i for i in ids if i is not None])}
        return [stored[i] if i is not None else None for i in ids]

    def _store(self, tx: Tx, w: PendingWrite) -> int | None:
        r = w.result
        if w.status == "ok" and w.only_if_changed and r.digest and tx.execute(
                "SELECT 1 FROM current c JOIN snapshot s ON s.id = c.snapshot_id "
                "WHERE c.feed = ? AND s.digest = ?", (r.feed, r.digest)).fetchone():
            return None
        snap_id = self._insert_snapshot(tx, r, w.status, w.message, oldest_observation(r.offers))
        if w.status == "ok":
            tx.insert_rows("offer", _OFFER_INSERT,
                           (_offer_row(snap_id, i, o) for i, o in enumerate(r.offers)))
        self._insert_unmapped(tx, snap_id, r.unmapped)
        if w.status == "ok":
            self._swap(tx, r.feed, snap_id)
        return snap_id

    def replace_feeds(self, results: list[FeedResult], *, expected: dict[str, str]) -> bool:
        """Replace whole feeds with ``results`` (one snapshot each, in order) in one
        transaction, unless the feeds' current digests are already ``expected`` (checked
        inside the transaction, so two processes seeding at once store them once). Returns
        whether anything was written."""
        feeds = sorted({r.feed for r in results} | set(expected))
        with self._write() as tx:
            have = dict(tx.execute(
                "SELECT c.feed, s.digest FROM current c JOIN snapshot s ON s.id = c.snapshot_id"
                f" WHERE c.feed IN ({','.join('?' * len(feeds))})", feeds).fetchall())
            if have == expected:
                return False
            holders = sorted(set(have) | set(feeds))
            marks = ",".join("?" * len(holders))
            tx.execute(f"DELETE FROM current WHERE feed IN ({marks})", holders)
            tx.execute(f"DELETE FROM snapshot WHERE feed IN ({marks})", holders)
            for r in results:
                self._store(tx, PendingWrite(r))
        return True

    def _insert_snapshot(self, tx: Tx, r: FeedResult, status: str,
                         message: str | None, observed: datetime | None) -> int:
        return tx.insert_id(
            f"INSERT INTO snapshot ({_SNAPSHOT_COLS.replace('id, ', '', 1)}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (r.feed, r.source, r.kind, status, iso(r.fetched_at),
             iso(observed) if observed else None, r.version, r.digest, len(r.offers),
             sum(u.rows for u in r.unmapped), json.dumps(r.skipped) if r.skipped else None,
             message, r.rows))

    @staticmethod
    def _insert_unmapped(tx: Tx, snap_id: int, items: list[Unmapped]) -> None:
        if items:
            tx.insert_rows("unmapped", _UNMAPPED_INSERT, [
                (snap_id, u.provider, u.name, u.instance, u.memory_gb, u.reason,
                 ",".join(u.candidates), u.rows) for u in items])

    @staticmethod
    def _swap(tx: Tx, feed: str, snap_id: int) -> None:
        """Point ``feed`` at ``snap_id`` (inside the caller's write transaction)."""
        tx.execute("INSERT INTO current (feed, snapshot_id) VALUES (?, ?) "
                   "ON CONFLICT(feed) DO UPDATE SET snapshot_id = excluded.snapshot_id",
                   (feed, snap_id))

    def add_url_source(self, name: str, url: str, allow_http: bool = False) -> None:
        with self._write() as con:
            con.execute("INSERT INTO url_source (name, url, allow_http, added_at) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET url = excluded.url,"
                        " allow_http = excluded.allow_http", (name, url, int(allow_http),
                                                             iso(utc_now())))

    def remove_url_source(self, name: str) -> bool:
        with self._write() as con:
            return con.execute("DELETE FROM url_source WHERE name = ?", (name,)).rowcount > 0

    def remove_feed(self, feed: str) -> int:
        """Delete a feed: its current pointer and every snapshot of it, with their offers (its
        history goes with it). Returns how many snapshots were deleted."""
        with self._write() as con:
            con.execute("DELETE FROM current WHERE feed = ?", (feed,))
            return con.execute("DELETE FROM snapshot WHERE feed = ?", (feed,)).rowcount

    def prune(self, keep: int) -> int:
        """Delete all but the ``keep`` newest snapshots of each feed (never a current one, and
        never the shipped history of published prices, whose snapshots are its points)."""
        if keep < 1:
            raise ValueError("keep at least one snapshot per feed")
        with self._write() as con:
            cur = con.execute(
                "DELETE FROM snapshot WHERE id NOT IN (SELECT snapshot_id FROM current) AND "
                "kind != 'history' AND id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER "
                "(PARTITION BY feed ORDER BY id DESC) AS n FROM snapshot) AS ranked WHERE n > ?)",
                (keep,))
            return cur.rowcount

    # -------------------------------------------------------------- reading

    def url_sources(self) -> list[tuple[str, str, bool]]:
        with self._read() as con:
            return [(n, u, bool(h)) for n, u, h in con.execute(
                "SELECT name, url, allow_http FROM url_source ORDER BY name")]

    def snapshot(self, snap_id: int) -> Snapshot:
        with self._read() as con:
            row = con.execute(f"SELECT {_SNAPSHOT_COLS} FROM snapshot WHERE id = ?",
                              (snap_id,)).fetchone()
        if row is None:
            raise DataError(self.path, f"no snapshot {snap_id}")
        return _snapshot(row)

    def current(self) -> list[Snapshot]:
        """The current (latest good) snapshot of every feed."""
        with self._read() as con:
            return self._current(con)

    def generation(self) -> tuple[tuple[str, int], ...]:
        """Which snapshot each feed points at now: a cheap fingerprint of the current prices
        (a refresh or import that stores a new snapshot changes it)."""
        with self._read() as con:
            return tuple(con.execute("SELECT feed, snapshot_id FROM current ORDER BY feed"))

    def current_of(self, feed: str) -> Snapshot | None:
        return next((s for s in self.current() if s.feed == feed), None)

    def _snapshots_by_id(self, ids: list[int]) -> list[Snapshot]:
        with self._read() as con:
            return [_snapshot(r) for r in con.execute(
                f"SELECT {_SNAPSHOT_COLS} FROM snapshot WHERE id IN "
                f"({','.join('?' * len(ids))}) ORDER BY id", ids)]

    @staticmethod
    def _current(con: Tx) -> list[Snapshot]:
        cols = ", ".join(f"s.{c.strip()}" for c in _SNAPSHOT_COLS.split(","))
        return [_snapshot(r) for r in con.execute(
            f"SELECT {cols} FROM current c JOIN snapshot s ON s.id = c.snapshot_id "
            "ORDER BY s.feed")]

    def read(self, snapshot_ids: Iterable[int] | None = None, *,
             gpus: Iterable[str] | None = None, cheapest_only: bool = False,
             skip: Iterable[tuple[int, str]] = (),
             ) -> tuple[list[Snapshot], list[Offer]]:
        """Snapshots and their offers, read together: the current ones by default.

        ``gpus`` reads only those GPUs' offers (through the ``offer_by_gpu`` index).
        ``skip`` leaves out the offers of ``(snapshot id, provider)`` pairs (a provider that a
        newer feed prices). ``cheapest_only`` keeps, across the snapshots read, one offer per
        GPU, GPU count, currency, spot and billing rule: the cheapest (of equal prices, the
        first stored: the lowest snapshot id, then its place in the snapshot). Any other offer
        of that kind costs more for any job, so a cost-minimising answer never picks it; a
        price list it is not.
        """
        gpu_args: list[str] = sorted(set(gpus)) if gpus is not None else []
        skip_pairs = sorted(set(skip))
        with self._read() as con:
            if snapshot_ids is None:
                snaps = self._current(con)
            else:
                ids = list(snapshot_ids)
                snaps = [_snapshot(r) for r in con.execute(
                    f"SELECT {_SNAPSHOT_COLS} FROM snapshot WHERE id IN "
                    f"({','.join('?' * len(ids))}) AND status = 'ok' ORDER BY feed, id", ids)]
            if not snaps or (gpus is not None and not gpu_args):
                return snaps, []
            feed_of = {s.id: s.feed for s in snaps}
            where = f"snapshot_id IN ({','.join('?' * len(feed_of))})"
            args: list[Any] = list(feed_of)
            if gpus is not None:
                where += f" AND gpu IN ({','.join('?' * len(gpu_args))})"
                args += gpu_args
            if skip_pairs:
                where += " AND NOT (" + " OR ".join(
                    "(snapshot_id = ? AND provider = ?)" for _ in skip_pairs) + ")"
                args += [x for pair in skip_pairs for x in pair]
            plausible, plausible_args = _plausible_now()
            left_out = dict(con.execute(
                f"SELECT snapshot_id, COUNT(*) FROM offer WHERE {where} AND (CASE WHEN "
                f"{plausible} THEN 0 ELSE 1 END) = 1 GROUP BY snapshot_id",
                [*args, *plausible_args]).fetchall())
            where += f" AND {plausible}"
            args += plausible_args
            if cheapest_only:
                # One offer per kind: the cheapest, and of equal prices the first stored
                # (lowest snapshot id, then place in it), the same on both engines.
                sql = (f"SELECT snapshot_id, {_OFFER_COLS} FROM (SELECT snapshot_id, "
                       f"{_OFFER_COLS}, ROW_NUMBER() OVER (PARTITION BY {_KIND} ORDER BY "
                       f"price_per_hour, snapshot_id, seq) AS pick FROM offer WHERE {where}) "
                       f"AS ranked WHERE pick = 1 ORDER BY snapshot_id, {_KIND}")
            else:
                sql = (f"SELECT snapshot_id, {_OFFER_COLS} FROM offer WHERE {where} "
                       "ORDER BY snapshot_id, seq")
            pool: dict[str, str] = {}
            offers = []
            for r in con.execute(sql, args):
                if _row_ok(r[1:]):
                    offers.append(_offer(r[1:], feed_of[r[0]], pool))
                else:
                    left_out[r[0]] = left_out.get(r[0], 0) + 1
        if left_out:
            snaps = [replace(s, problems=(*s.problems, _left_out(s, int(left_out[s.id]))))
                     if left_out.get(s.id) else s for s in snaps]
        return snaps, offers

    def problems(self, snapshots: Iterable[Snapshot]) -> list[str]:
        """What reading ``snapshots`` left out, one line each (see :attr:`Snapshot.problems`)."""
        return [p for s in snapshots for p in s.problems]

    def composition(self, snapshot_ids: Iterable[int]) -> dict[int, set[tuple[str, str]]]:
        """The ``(provider, currency)`` pairs each snapshot's offers have: enough to choose
        feeds per provider and to leave out an unusable feed without reading its offers."""
        ids = list(snapshot_ids)
        if not ids:
            return {}
        out: dict[int, set[tuple[str, str]]] = {i: set() for i in ids}
        with self._read() as con:
            for sid, prov, cur in con.execute(
                    "SELECT DISTINCT snapshot_id, provider, currency FROM offer WHERE "
                    f"snapshot_id IN ({','.join('?' * len(ids))})", ids):
                out[sid].add((prov, cur))
        return out

    def snapshots(self, feed: str | None = None, *, limit: int | None = None,
                  status: str | None = None) -> list[Snapshot]:
        """Recorded fetches, newest first (every status unless told)."""
        where, args = [], []
        if feed is not None:
            where.append("feed = ?")
            args.append(feed)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        sql = f"SELECT {_SNAPSHOT_COLS} FROM snapshot"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self._read() as con:
            return [_snapshot(r) for r in con.execute(sql, args)]

    def last_attempts(self) -> dict[str, Snapshot]:
        """The latest fetch of every feed, whatever its status."""
        with self._read() as con:
            rows = con.execute(f"SELECT {_SNAPSHOT_COLS} FROM snapshot WHERE id IN "
                               "(SELECT MAX(id) FROM snapshot GROUP BY feed)").fetchall()
        return {s.feed: s for s in map(_snapshot, rows)}

    def fetch_counts(self) -> list[tuple[str, str, int, datetime | None]]:
        """Per feed and status (ok, failed, rejected): how many fetches the store keeps and
        when the latest was stored; what /metrics reports, whichever process refreshed."""
        with self._read() as con:
            rows = con.execute("SELECT feed, status, COUNT(*), MAX(fetched_at) FROM snapshot "
                               "GROUP BY feed, status ORDER BY feed, status").fetchall()
        return [(feed, status, int(n), parse_time(last)) for feed, status, n, last in rows]

    def unmapped(self, snap_id: int) -> list[Unmapped]:
        with self._read() as con:
            return [Unmapped(p, n, r, i, m, tuple(c.split(",")) if c else (), rows)
                    for p, n, i, m, r, c, rows in con.execute(
                        "SELECT provider, name, instance, memory_gb, reason, candidates, rows "
                        "FROM unmapped WHERE snapshot_id = ? ORDER BY rows DESC", (snap_id,))]

    def history(self, gpus: Iterable[str], *, feed: str | None = None,
                dated: bool | None = True) -> list[HistoryPoint]:
        """Per snapshot, GPU, currency and spot: the cheapest and median per-GPU-hour price,
        oldest observation first (good snapshots only; shipped published points included).

        An undated price (an article's example) has no place on a time axis: by default only
        dated points come back; ``dated=False`` gives the undated ones (to list them as such),
        ``dated=None`` both."""
        gpus = list(gpus)
        if not gpus:
            return []
        plausible, plausible_args = _plausible_now("o.observed_at")  # s has one too
        sql = ("SELECT s.id, s.feed, s.fetched_at, s.observed_at, o.gpu, o.currency, o.spot, "
               "o.price_per_hour / o.gpu_count, o.provider, o.source FROM offer o JOIN snapshot s "
               f"ON s.id = o.snapshot_id WHERE s.status = 'ok' AND o.gpu IN "
               f"({','.join('?' * len(gpus))}) AND {plausible}")
        args: list[Any] = [*gpus, *plausible_args]
        if feed is not None:
            sql += " AND s.feed = ?"
            args.append(feed)
        groups: dict[tuple, list[tuple[float, str, str]]] = {}
        meta: dict[int, tuple] = {}
        with self._read() as con:
            for sid, fd, fetched, observed, gpu, cur, spot, price, provider, source in \
                    con.execute(sql, args):
                groups.setdefault((sid, gpu, cur, bool(spot)), []).append(
                    (price, provider, source or ""))
                meta[sid] = (fd, fetched, observed)
        import statistics  # only the price history's median; keeps it off every start

        points = []
        for (sid, gpu, cur, spot), prices in groups.items():
            fd, fetched, observed = meta[sid]
            if dated is not None and (observed is not None) != dated:
                continue
            best = min(prices)
            points.append(HistoryPoint(
                sid, fd, parse_time(fetched) or utc_now(), parse_time(observed), gpu, spot,
                Money(best[0], cur), Money(statistics.median(p for p, _, _ in prices), cur),
                len(prices), best[1], best[2] or None))
        return sorted(points, key=lambda p: (p.observed_at or p.fetched_at, p.snapshot_id,
                                             p.gpu, p.spot, p.cheapest.currency))
