"""The local price store: SQLite (standard library), one dated snapshot per feed per refresh.

* Every fetch is recorded as a ``snapshot`` row: ``ok`` (with its offers), ``failed`` or
  ``rejected`` (with the reason, and no offers). Nothing is ever overwritten.
* ``current`` points each feed at its latest good snapshot. A new snapshot and its offers
  are inserted and the pointer moved in one transaction, so readers see the old snapshot or
  the new one, never half of one.
* WAL mode: readers never wait for a writer, and a refresh holds the write lock only for
  the final insert, not while it downloads.
* ``PRAGMA user_version`` is the schema version; :data:`MIGRATIONS` brings older files up
  to date, and a file from a newer whichgpu is refused rather than damaged.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from whichgpu.catalog.offers import BillingRule, Offer
from whichgpu.catalog.prices.sources import FeedResult, Unmapped, iso, parse_time, utc_now
from whichgpu.errors import DataError, WhichGPUError
from whichgpu.paths import data_dir
from whichgpu.units import Money

STORE_ENV = "WHICHGPU_PRICE_STORE"
STORE_FILE = "prices.sqlite"

_V1 = [
    """CREATE TABLE snapshot (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        feed TEXT NOT NULL,
        source TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'rejected')),
        fetched_at TEXT NOT NULL,
        observed_at TEXT,
        version TEXT,
        digest TEXT,
        offer_count INTEGER NOT NULL DEFAULT 0,
        unmapped_count INTEGER NOT NULL DEFAULT 0,
        skipped TEXT,
        message TEXT)""",
    "CREATE INDEX snapshot_by_feed ON snapshot(feed, id)",
    """CREATE TABLE offer (
        snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
        provider TEXT NOT NULL,
        gpu TEXT NOT NULL,
        gpu_count INTEGER NOT NULL CHECK (gpu_count >= 1),
        price_per_hour REAL NOT NULL CHECK (price_per_hour > 0),
        currency TEXT NOT NULL,
        billing_increment_s REAL NOT NULL,
        billing_minimum_s REAL NOT NULL,
        spot INTEGER NOT NULL,
        region TEXT,
        observed_at TEXT,
        source TEXT,
        note TEXT)""",
    "CREATE INDEX offer_by_snapshot ON offer(snapshot_id)",
    "CREATE INDEX offer_by_gpu ON offer(gpu, snapshot_id)",
    """CREATE TABLE unmapped (
        snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
        provider TEXT NOT NULL,
        name TEXT NOT NULL,
        instance TEXT,
        memory_gb REAL,
        reason TEXT NOT NULL,
        candidates TEXT,
        rows INTEGER NOT NULL)""",
    "CREATE INDEX unmapped_by_snapshot ON unmapped(snapshot_id)",
    """CREATE TABLE current (
        feed TEXT PRIMARY KEY,
        snapshot_id INTEGER NOT NULL REFERENCES snapshot(id))""",
    """CREATE TABLE url_source (
        name TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        allow_http INTEGER NOT NULL DEFAULT 0,
        added_at TEXT NOT NULL)""",
]
# v2: the provider's instance type of each offer (a launcher export names it)
_V2 = ["ALTER TABLE offer ADD COLUMN instance_type TEXT"]
#: ``MIGRATIONS[i]`` takes a store from schema version i to i + 1.
MIGRATIONS: list[list[str]] = [_V1, _V2]


class StoreError(WhichGPUError):
    """The price store cannot be used as it stands (a server fault, not bad input: HTTP 503).

    ``reason`` says why without the file's path (safe to show anyone); ``str(exc)`` names the
    path for the person who owns it. Nothing here ever advises deleting the store.
    """

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"price store {self.path}: {reason}")


def store_error(path: Path, exc: BaseException) -> StoreError:
    """What went wrong with the store file, said accurately (read-only, full, locked ...)."""
    text = str(exc).lower()
    folder = path.parent
    if isinstance(exc, PermissionError) or "readonly" in text or "read-only" in text or (
            "unable to open" in text and folder.exists() and not os.access(folder, os.W_OK)):
        return StoreError(path, "the store's folder or file is read-only, so it cannot be "
                          "opened for writing; the prices in it are intact. Make it writable, "
                          "or point --store / WHICHGPU_PRICE_STORE at a writable file")
    if "disk is full" in text or "no space" in text or getattr(exc, "errno", None) == 28:
        return StoreError(path, "the disk is full; nothing was changed and the stored prices "
                          "are intact. Free some space and run the command again")
    if "locked" in text or "busy" in text:
        return StoreError(path, "another process holds the store's write lock (a refresh or "
                          "import still running?); try again when it has finished")
    if "not a database" in text or "malformed" in text or "encrypted" in text:
        return StoreError(path, "this file is not a readable price store (not SQLite, or "
                          "damaged). whichgpu leaves it untouched: keep it for inspection and "
                          "point --store / WHICHGPU_PRICE_STORE at another file")
    if "unable to open" in text:
        return StoreError(path, f"the file cannot be opened ({exc}); check that its folder "
                          "exists and is accessible")
    return StoreError(path, f"{type(exc).__name__}: {exc}")


def default_store_path() -> Path:
    """``$WHICHGPU_PRICE_STORE``, else ``prices.sqlite`` in the data directory."""
    env = os.environ.get(STORE_ENV)
    return Path(env).expanduser() if env else data_dir() / STORE_FILE


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

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "feed": self.feed, "source": self.source, "kind": self.kind,
                "status": self.status, "fetched_at": iso(self.fetched_at),
                "observed_at": iso(self.observed_at) if self.observed_at else None,
                "version": self.version, "offer_count": self.offer_count,
                "unmapped_count": self.unmapped_count, "skipped": self.skipped,
                "message": self.message}


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
                  "offer_count, unmapped_count, skipped, message")
_OFFER_COLS = ("provider, gpu, gpu_count, price_per_hour, currency, billing_increment_s, "
               "billing_minimum_s, spot, region, observed_at, source, note, instance_type")


def _snapshot(row: tuple) -> Snapshot:
    (id_, feed, source, kind, status, fetched, observed, version, digest, count, unmapped,
     skipped, message) = row
    return Snapshot(id_, feed, source, kind, status, parse_time(fetched) or utc_now(),
                    parse_time(observed), version, digest, count, unmapped,
                    json.loads(skipped) if skipped else {}, message)


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


def oldest_observation(offers: Iterable[Offer]) -> datetime | None:
    """The oldest ``observed_at`` of the offers; None if any is undated (or there are none)."""
    times = [parse_time(o.observed_at) for o in offers]
    if not times or any(t is None for t in times):
        return None
    return min(times)  # type: ignore[type-var]


def _rollback(con: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (never mask the first error)."""
    if con.in_transaction:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass


class PriceStore:
    """A price store file. Cheap to create: each operation opens its own connection, so one
    object may be used from several threads, and several processes may share the file."""

    def __init__(self, path: str | Path | None = None, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path).expanduser() if path else default_store_path()
        self.timeout_s = timeout_s
        self._migrated = False

    def __repr__(self) -> str:
        return f"PriceStore({str(self.path)!r})"

    # -------------------------------------------------------------- connections

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise store_error(self.path, exc) from exc
        try:
            con.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
            mode = con.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal":
                con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA synchronous = NORMAL")
            con.execute("PRAGMA foreign_keys = ON")
            if not self._migrated:
                self._migrate(con)
                self._migrated = True
        except StoreError:
            con.close()
            raise
        except (OSError, sqlite3.Error) as exc:
            con.close()
            raise store_error(self.path, exc) from exc
        return con

    def _migrate(self, con: sqlite3.Connection) -> None:
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(self.path, f"schema version {version} was written by a newer "
                             f"whichgpu (this one knows up to {len(MIGRATIONS)}); the file is "
                             "left as it is: upgrade whichgpu, or point --store / "
                             "WHICHGPU_PRICE_STORE at another file")
        if version == len(MIGRATIONS):
            return
        con.execute("BEGIN IMMEDIATE")
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]  # another process?
            for step in MIGRATIONS[version:]:
                for statement in step:
                    con.execute(statement)
            con.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the same state of the store."""
        con = self._open()
        try:
            con.execute("BEGIN")
            yield con
            con.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise store_error(self.path, exc) from exc
        finally:
            con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        con = self._open()
        try:
            try:
                con.execute("BEGIN IMMEDIATE")
                yield con
                con.execute("COMMIT")
            except BaseException as exc:
                _rollback(con)  # a failed COMMIT (disk full) may have ended the transaction
                if isinstance(exc, sqlite3.OperationalError):
                    raise store_error(self.path, exc) from exc
                raise
        finally:
            con.close()

    def schema_version(self) -> int:
        with self._read() as con:
            return con.execute("PRAGMA user_version").fetchone()[0]

    # -------------------------------------------------------------- writing

    def save(self, result: FeedResult) -> Snapshot:
        """Record a good fetch and make it the feed's current snapshot, atomically."""
        snap = self._save(result, only_if_changed=False)
        assert snap is not None
        return snap

    def save_if_changed(self, result: FeedResult) -> Snapshot | None:
        """Like :meth:`save`, unless the current snapshot already has this content (same
        digest), checked inside the write transaction: two processes seeding a fresh store
        store it once. None when nothing was stored."""
        return self._save(result, only_if_changed=True)

    def _save(self, result: FeedResult, *, only_if_changed: bool) -> Snapshot | None:
        observed = oldest_observation(result.offers)
        rows = [(o.provider, o.gpu, o.gpu_count, o.price_per_hour.amount,
                 o.price_per_hour.currency, o.billing.increment_s, o.billing.minimum_s,
                 int(o.spot), o.region, o.observed_at, o.source, o.note, o.instance_type)
                for o in result.offers]
        with self._write() as con:
            if only_if_changed and result.digest and con.execute(
                    "SELECT 1 FROM current c JOIN snapshot s ON s.id = c.snapshot_id "
                    "WHERE c.feed = ? AND s.digest = ?", (result.feed, result.digest)
            ).fetchone():
                return None
            snap_id = self._insert_snapshot(con, result, "ok", None, observed)
            con.executemany(f"INSERT INTO offer (snapshot_id, {_OFFER_COLS}) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [(snap_id, *r) for r in rows])
            self._insert_unmapped(con, snap_id, result.unmapped)
            self._swap(con, result.feed, snap_id)
        return self.snapshot(snap_id)

    def replace_feeds(self, results: list[FeedResult], *, expected: dict[str, str]) -> bool:
        """Replace whole feeds with ``results`` (one snapshot each, in order) in one
        transaction, unless the feeds' current digests are already ``expected`` (checked
        inside the transaction, so two processes seeding at once store them once). Returns
        whether anything was written."""
        feeds = sorted({r.feed for r in results} | set(expected))
        with self._write() as con:
            have = dict(con.execute(
                "SELECT c.feed, s.digest FROM current c JOIN snapshot s ON s.id = c.snapshot_id"
                f" WHERE c.feed IN ({','.join('?' * len(feeds))})", feeds).fetchall())
            if have == expected:
                return False
            holders = sorted(set(have) | set(feeds))
            marks = ",".join("?" * len(holders))
            con.execute(f"DELETE FROM current WHERE feed IN ({marks})", holders)
            con.execute(f"DELETE FROM snapshot WHERE feed IN ({marks})", holders)
            for r in results:
                snap_id = self._insert_snapshot(con, r, "ok", None, oldest_observation(r.offers))
                con.executemany(f"INSERT INTO offer (snapshot_id, {_OFFER_COLS}) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [(snap_id, o.provider, o.gpu, o.gpu_count,
                                  o.price_per_hour.amount, o.price_per_hour.currency,
                                  o.billing.increment_s, o.billing.minimum_s, int(o.spot),
                                  o.region, o.observed_at, o.source, o.note, o.instance_type)
                                 for o in r.offers])
                self._swap(con, r.feed, snap_id)
        return True

    def save_problem(self, result: FeedResult, status: str, message: str) -> Snapshot:
        """Record a fetch that failed or was rejected; the current snapshot stays as it is."""
        if status not in ("failed", "rejected"):
            raise ValueError(status)
        with self._write() as con:
            snap_id = self._insert_snapshot(con, result, status, message,
                                            oldest_observation(result.offers))
            self._insert_unmapped(con, snap_id, result.unmapped)
        return self.snapshot(snap_id)

    def _insert_snapshot(self, con: sqlite3.Connection, r: FeedResult, status: str,
                         message: str | None, observed: datetime | None) -> int:
        cur = con.execute(
            f"INSERT INTO snapshot ({_SNAPSHOT_COLS.replace('id, ', '', 1)}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (r.feed, r.source, r.kind, status, iso(r.fetched_at),
             iso(observed) if observed else None, r.version, r.digest, len(r.offers),
             sum(u.rows for u in r.unmapped), json.dumps(r.skipped) if r.skipped else None,
             message))
        return int(cur.lastrowid)

    @staticmethod
    def _insert_unmapped(con: sqlite3.Connection, snap_id: int, items: list[Unmapped]) -> None:
        con.executemany(
            "INSERT INTO unmapped (snapshot_id, provider, name, instance, memory_gb, reason, "
            "candidates, rows) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(snap_id, u.provider, u.name, u.instance, u.memory_gb, u.reason,
              ",".join(u.candidates), u.rows) for u in items])

    @staticmethod
    def _swap(con: sqlite3.Connection, feed: str, snap_id: int) -> None:
        """Point ``feed`` at ``snap_id`` (inside the caller's write transaction)."""
        con.execute("INSERT INTO current (feed, snapshot_id) VALUES (?, ?) "
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
                "(PARTITION BY feed ORDER BY id DESC) AS n FROM snapshot) WHERE n > ?)", (keep,))
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

    @staticmethod
    def _current(con: sqlite3.Connection) -> list[Snapshot]:
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
        first the query meets). Any other offer of that kind costs more for any job, so a
        cost-minimising answer never picks it; a price list it is not.
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
            if cheapest_only:
                # SQLite takes a min() query's other columns from the row with the minimum
                # (https://www.sqlite.org/lang_select.html#bare_columns_in_an_aggregate_query):
                # one pass over the index, no sort of the whole set.
                cols = _OFFER_COLS.replace("price_per_hour", "MIN(price_per_hour)")
                sql = (f"SELECT snapshot_id, {cols} FROM offer WHERE {where} GROUP BY gpu, "
                       "gpu_count, currency, spot, billing_increment_s, billing_minimum_s "
                       "ORDER BY snapshot_id, gpu, gpu_count, spot, currency")
            else:
                sql = (f"SELECT snapshot_id, {_OFFER_COLS} FROM offer WHERE {where} "
                       "ORDER BY snapshot_id, rowid")
            pool: dict[str, str] = {}
            offers = [_offer(r[1:], feed_of[r[0]], pool) for r in con.execute(sql, args)]
        return snaps, offers

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

    def unmapped(self, snap_id: int) -> list[Unmapped]:
        with self._read() as con:
            return [Unmapped(p, n, r, i, m, tuple(c.split(",")) if c else (), rows)
                    for p, n, i, m, r, c, rows in con.execute(
                        "SELECT provider, name, instance, memory_gb, reason, candidates, rows "
                        "FROM unmapped WHERE snapshot_id = ? ORDER BY rows DESC", (snap_id,))]

    def history(self, gpus: Iterable[str], *, feed: str | None = None) -> list[HistoryPoint]:
        """Per snapshot, GPU, currency and spot: the cheapest and median per-GPU-hour price,
        oldest observation first (good snapshots only; shipped published points included)."""
        gpus = list(gpus)
        if not gpus:
            return []
        sql = ("SELECT s.id, s.feed, s.fetched_at, s.observed_at, o.gpu, o.currency, o.spot, "
               "o.price_per_hour / o.gpu_count, o.provider, o.source FROM offer o JOIN snapshot s "
               f"ON s.id = o.snapshot_id WHERE s.status = 'ok' AND o.gpu IN "
               f"({','.join('?' * len(gpus))})")
        args: list[Any] = list(gpus)
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
        points = []
        for (sid, gpu, cur, spot), prices in groups.items():
            fd, fetched, observed = meta[sid]
            best = min(prices)
            points.append(HistoryPoint(
                sid, fd, parse_time(fetched) or utc_now(), parse_time(observed), gpu, spot,
                Money(best[0], cur), Money(statistics.median(p for p, _, _ in prices), cur),
                len(prices), best[1], best[2] or None))
        return sorted(points, key=lambda p: (p.observed_at or p.fetched_at, p.snapshot_id,
                                             p.gpu, p.spot, p.cheapest.currency))
