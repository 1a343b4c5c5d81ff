"""The price store on both engines (a SQLite file, a real PostgreSQL): snapshots with history,
guards, one refresh at a time, and nothing lost when a refresh fails.

Every test taking ``store`` runs twice, once per engine (``store_backends``); the few that
are about one engine's own file or server say so in their name.
"""

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from prices_support import GPUHUNT_DIR
from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices import schema as schema_mod
from whichgpu.catalog.prices.gpuhunt_source import GpuhuntSource
from whichgpu.catalog.prices.refresh import Guards, record, refresh
from whichgpu.catalog.prices.sources import FeedResult, PriceSource, iso, utc_now
from whichgpu.catalog.prices.store import RefreshBusy, StoreError
from whichgpu.units import Money

T0 = utc_now() - timedelta(days=3)


def offers(price: float, n: int = 3, gpu: str = "h100-sxm", feed: str = "test",
           spot: bool = False) -> list[Offer]:
    return [Offer(provider=f"p{i}", gpu=gpu, price_per_hour=Money(price + i / 100, "USD"),
                  spot=spot, observed_at=iso(T0), source="unit test", offer_set=feed)
            for i in range(n)]


def feed(price: float | None, *, name: str = "test", error: str | None = None,
         n: int = 3, fetched_at=None) -> FeedResult:
    return FeedResult(feed=name, source="unit", kind="test",
                      offers=offers(price, n, feed=name) if price is not None else [],
                      fetched_at=fetched_at or utc_now(), error=error)


def poisoned(name: str = "test", price: float = 2.0) -> FeedResult:
    """A feed whose last offer breaks the store's CHECK (price > 0): both engines refuse it
    mid-insert, after the snapshot row and the first offers are written. (Offer's own
    validation would refuse it earlier: model_construct skips it, as a bug might.)"""
    bad = Offer.model_construct(**{**offers(price, 1, feed=name)[0].__dict__,
                                   "price_per_hour": Money(-1.0, "USD")})
    return FeedResult(feed=name, source="unit", kind="test",
                      offers=[*offers(price, 50, feed=name), bad], fetched_at=utc_now())


class ListSource(PriceSource):
    """A source that yields prepared results, or raises."""

    kind = "test"

    def __init__(self, name: str, results: list[FeedResult] | Exception) -> None:
        self.name = name
        self.results = results

    def fetch(self, progress=None) -> Iterator[FeedResult]:
        if isinstance(self.results, Exception):
            raise self.results
        yield from self.results


def test_fresh_store_is_created_at_the_latest_schema(store):
    assert store.schema_version() == len(schema_mod.MIGRATIONS) == 6
    assert store.current() == [] and store.read() == ([], [])


def test_a_fresh_sqlite_file_is_in_wal_mode(tmp_path):
    store = PriceStore(tmp_path / "prices.sqlite")
    store.current()
    con = sqlite3.connect(store.path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_fresh_postgresql_schema_gets_every_table_and_its_version(pg_url):
    import psycopg

    PriceStore(pg_url).current()
    with psycopg.connect(pg_url) as con:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema()")}
        version = con.execute("SELECT version FROM whichgpu_schema").fetchall()
        price_type = con.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = 'offer' AND column_name = 'price_per_hour'"
        ).fetchone()[0]
    assert tables == {"snapshot", "offer", "unmapped", "current", "url_source", "run",
                      "api_snapshot", "api_price", "whichgpu_schema"}
    assert version == [(len(schema_mod.MIGRATIONS),)]
    assert price_type == "double precision"  # PostgreSQL's REAL would keep 4 bytes


def test_default_store_lives_in_the_data_directory_and_can_be_moved(tmp_path, monkeypatch):
    assert PriceStore().path == tmp_path / "whichgpu-home" / "prices.sqlite"
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(tmp_path / "elsewhere.sqlite"))
    assert PriceStore().path == tmp_path / "elsewhere.sqlite"
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", f"sqlite:///{tmp_path}/by-url.sqlite")
    assert PriceStore().path == tmp_path / "by-url.sqlite"  # the URL wins over the file


def test_database_url_selects_postgresql_everywhere(pg_url, monkeypatch):
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", pg_url)
    store = PriceStore()
    assert store.dialect == "postgresql" and store.location == pg_url
    store.save(feed(2.0))
    assert [s.feed for s in PriceStore(pg_url).current()] == ["test"]


def test_an_older_store_is_migrated_and_a_newer_one_refused(store, store_url, monkeypatch):
    store.save(feed(2.0))
    extra = ["ALTER TABLE snapshot ADD COLUMN collector {text}"]
    monkeypatch.setattr(schema_mod, "MIGRATIONS", [*schema_mod.MIGRATIONS, extra])
    upgraded = PriceStore(store_url)
    assert upgraded.schema_version() == len(schema_mod.MIGRATIONS) == 7
    assert len(upgraded.read()[1]) == 3  # the data survived the migration
    monkeypatch.setattr(schema_mod, "MIGRATIONS", schema_mod.MIGRATIONS[:4])
    with pytest.raises(StoreError, match="newer whichgpu") as info:
        PriceStore(store_url).current()
    assert "left as it is" in info.value.reason


def test_a_version_1_sqlite_store_is_upgraded_and_keeps_its_offers_in_order(tmp_path):
    """Schema 2 adds each offer's instance type (what a launcher export names), schema 3 its
    place in the snapshot, schema 4 the upstream file's row count: a store written at schema 1
    is upgraded in place, its offers kept in the order they were stored (instance type and row
    count unknown), and new offers keep theirs."""
    path = tmp_path / "prices.sqlite"
    con = sqlite3.connect(path)
    for statement in schema_mod.steps("sqlite", 0, schema_mod.MIGRATIONS[:1]):
        con.execute(statement)
    con.execute("INSERT INTO snapshot (feed, source, kind, status, fetched_at, offer_count) "
                "VALUES ('old', 'unit', 'test', 'ok', ?, 1)", (iso(utc_now()),))
    for gpu, price in (("l4", 0.9), ("a100-80gb-sxm", 1.2), ("h100-sxm", 0.9)):
        con.execute("INSERT INTO offer (snapshot_id, provider, gpu, gpu_count, "
                    "price_per_hour, currency, billing_increment_s, billing_minimum_s, spot, "
                    "observed_at) VALUES (1, 'p', ?, 1, ?, 'USD', 1, 0, 0, '2026-11-30')",
                    (gpu, price))
    con.execute("INSERT INTO current (feed, snapshot_id) VALUES ('old', 1)")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    store = PriceStore(path)
    assert store.schema_version() == len(schema_mod.MIGRATIONS)
    assert store.current_of("old").source_rows is None
    kept = store.read()[1]
    assert [(o.gpu, o.instance_type) for o in kept] == [
        ("l4", None), ("a100-80gb-sxm", None), ("h100-sxm", None)]
    typed = Offer(provider="p", gpu="h100-sxm", price_per_hour=Money(2.5, "USD"),
                  instance_type="gpu_1x_h100_sxm5", observed_at="2026-11-30")
    store.save(FeedResult(feed="typed", source="test", kind="test", offers=[typed],
                          fetched_at=utc_now()))
    assert {o.instance_type for o in store.read()[1] if o.offer_set == "typed"} == {
        "gpu_1x_h100_sxm5"}


def test_two_processes_opening_an_empty_postgresql_create_the_tables_once(pg_url):
    """Both run the migrations at the same moment; the advisory lock lets one create the
    tables and the other find them made (no 'relation already exists')."""
    import subprocess
    import sys

    code = ("import sys, time\nfrom whichgpu.catalog.prices import PriceStore\n"
            "t = float(sys.argv[2])\nwhile time.time() < t: pass\n"
            "print(PriceStore(sys.argv[1]).schema_version())")
    start = str(time.time() + 1.5)
    procs = [subprocess.Popen([sys.executable, "-c", code, pg_url, start],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert [o.strip() for o, _ in outs] == [str(len(schema_mod.MIGRATIONS))] * 3


def test_a_file_that_is_not_a_sqlite_store_is_a_clear_error(tmp_path):
    bad = tmp_path / "prices.sqlite"
    bad.write_text("not a database at all, just text " * 100)
    with pytest.raises(StoreError, match="not a readable price store") as info:
        PriceStore(bad).current()
    assert "move it away" not in str(info.value) and "untouched" in info.value.reason
    assert bad.read_text().startswith("not a database")


def test_a_postgresql_schema_with_someone_elses_tables_is_a_clear_error(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("CREATE TABLE snapshot (who TEXT)")  # another application's table
    with pytest.raises(StoreError, match="did not create") as info:
        PriceStore(pg_url).current()
    assert "another database or schema" in info.value.reason
    with psycopg.connect(pg_url) as con:  # left as it was
        assert con.execute("SELECT to_regclass('offer')").fetchone()[0] is None


def _folder_that_refuses_files(tmp_path):
    """A folder the store cannot create its file in, for any user: a folder without write
    permission, or, as root (who ignores permissions), /sys, whose filesystem refuses new
    files for everyone. Yields the folder; None when neither can be had here."""
    import contextlib
    import errno

    @contextlib.contextmanager
    def chmodded():
        folder = tmp_path / "ro"
        folder.mkdir()
        PriceStore(folder / "prices.sqlite").save(feed(2.0))  # a store already in it
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)

    @contextlib.contextmanager
    def sysfs():
        try:
            open("/sys/whichgpu-probe", "w").close()
        except OSError as exc:
            yield Path("/sys") if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) \
                else None
        else:  # pragma: no cover - a /sys that takes files
            os.remove("/sys/whichgpu-probe")
            yield None

    return chmodded() if os.geteuid() != 0 else sysfs()


def test_a_read_only_folder_is_said_so_and_never_called_unusable(tmp_path):
    with _folder_that_refuses_files(tmp_path) as folder:
        if folder is None:
            pytest.skip("no folder here refuses files to this user")
        with pytest.raises(StoreError, match="read-only") as info:
            PriceStore(folder / "new.sqlite").current()
        assert "intact" in info.value.reason
        for bad in ("move it away", "delete", "unusable"):
            assert bad not in info.value.reason.lower()


def test_sqlite_store_errors_are_classified_without_advising_deletion(tmp_path):
    from whichgpu.catalog.prices.store import store_error

    path = tmp_path / "prices.sqlite"
    cases = {
        "read-only": sqlite3.OperationalError("attempt to write a readonly database"),
        "disk is full": sqlite3.OperationalError("database or disk is full"),
        "write lock": sqlite3.OperationalError("database is locked"),
        "not a readable price store": sqlite3.DatabaseError("file is not a database"),
    }
    for words, exc in cases.items():
        err = store_error(path, exc)
        assert words in err.reason, (words, err.reason)
        assert str(path) not in err.reason and str(path) in str(err)
        for bad in ("move it away", "delete", "remove the"):
            assert bad not in err.reason.lower()


def _disk_full(store_url: str, monkeypatch) -> None:
    """Make the engine's bulk insert fail as a full disk does, in that engine's own error."""
    if store_url.startswith("postgresql"):
        import psycopg

        from whichgpu.catalog.prices.backends.postgres import PostgresTx

        def full(self, table, columns, rows):
            raise psycopg.errors.DiskFull("could not extend file: No space left on device")
        monkeypatch.setattr(PostgresTx, "insert_rows", full)
    else:
        from whichgpu.catalog.prices.backends.sqlite import SQLiteTx

        def full(self, table, columns, rows):
            raise sqlite3.OperationalError("database or disk is full")
        monkeypatch.setattr(SQLiteTx, "insert_rows", full)


def test_a_full_disk_during_a_write_keeps_the_store_and_says_so(store, store_url,
                                                                monkeypatch):
    store.save(feed(2.0))
    _disk_full(store_url, monkeypatch)
    with pytest.raises(StoreError, match="disk is full") as info:
        store.save(feed(3.0))
    assert "no transaction is active" not in str(info.value)
    monkeypatch.undo()
    (snap,) = store.current()
    assert snap.offer_count == 3 and len(store.snapshots()) == 1  # no half-written snapshot


def test_a_write_the_engine_refuses_midway_leaves_nothing_behind(store):
    """A real error from the engine after the snapshot row and 50 offers went in: the whole
    transaction is rolled back, on both engines."""
    first = record(store, feed(3.0))
    with pytest.raises(StoreError):
        record(store, poisoned(price=3.1))
    assert [s.id for s in store.snapshots()] == [first.snapshot.id]
    assert store.current()[0].id == first.snapshot.id
    assert sorted(o.price_per_hour.amount for o in store.read()[1]) == [3.0, 3.01, 3.02]


def test_a_refresh_is_one_transaction_and_a_failed_write_keeps_every_feed(store):
    """Two sources in one refresh; the second feed's write fails inside the engine. The
    first feed's new snapshot, written earlier in the same transaction, is gone too: the
    store keeps exactly what it had, and readers never saw one feed new and one old."""
    record(store, feed(3.0, name="a"))
    record(store, feed(3.0, name="b"))
    before = store.generation()
    with pytest.raises(StoreError):
        refresh([ListSource("a", [feed(2.9, name="a")]),
                 ListSource("b", [poisoned("b", 2.9)])], store)
    assert store.generation() == before
    assert len(store.snapshots()) == 2
    report = refresh([ListSource("a", [feed(2.9, name="a")]),
                      ListSource("b", [feed(2.8, name="b")])], store)
    assert report.ok and store.generation() != before
    assert {s.feed: s.id for s in store.current()} == {
        o.feed: o.snapshot.id for o in report.outcomes}


def test_a_second_refresh_skips_with_the_holders_name_or_waits_its_turn(store, store_url):
    """One refresh at a time per store: another one told not to wait is refused at once,
    naming who holds the lock; one told to wait runs once the first has finished."""
    holding, release = threading.Event(), threading.Event()

    class Slow(PriceSource):
        kind, name = "test", "slow"

        def fetch(self, progress=None):
            holding.set()
            release.wait(10)
            yield feed(2.0, name="slow")

    first = threading.Thread(target=refresh, args=([Slow()], PriceStore(store_url)))
    first.start()
    try:
        assert holding.wait(10)
        t0 = time.monotonic()
        with pytest.raises(RefreshBusy) as info:
            refresh([ListSource("fast", [feed(3.0, name="fast")])], PriceStore(store_url))
        assert time.monotonic() - t0 < 2
        assert f"pid {os.getpid()}" in str(info.value) and "skipped" in str(info.value)
        assert "--wait" in str(info.value)
        threading.Timer(0.6, release.set).start()
        t0 = time.monotonic()
        report = refresh([ListSource("fast", [feed(3.0, name="fast")])],
                         PriceStore(store_url), wait_s=20)
        assert report.ok and time.monotonic() - t0 >= 0.5
    finally:
        release.set()
        first.join(10)
    assert {s.feed for s in store.current()} == {"slow", "fast"}
    with pytest.raises(RefreshBusy, match=r"after waiting 0\.3 s"):
        with store.refresh_lock():
            refresh([ListSource("x", [feed(1.0, name="x")])], PriceStore(store_url),
                    wait_s=0.3)


def test_of_equal_prices_the_first_stored_offer_is_kept_on_both_engines(store):
    """cheapest_only keeps one offer per kind; a tie goes to the first stored (the lowest
    snapshot id, then its place in the snapshot), not to whichever row the engine meets."""
    rule = BillingRule(increment_s=60, minimum_s=0)
    tied = [Offer(provider=p, gpu="l40s", price_per_hour=Money(0.9, "USD"), billing=rule,
                  observed_at=iso(T0), region=r)
            for p, r in (("zeta", "z-1"), ("alpha", "a-1"), ("mid", "m-1"))]
    store.save(FeedResult(feed="later", source="unit", kind="test", offers=[
        Offer(provider="omega", gpu="l40s", price_per_hour=Money(0.9, "USD"), billing=rule,
              observed_at=iso(T0))], fetched_at=utc_now()))
    store.save(FeedResult(feed="ties", source="unit", kind="test", offers=tied,
                          fetched_at=utc_now()))
    _, best = store.read(cheapest_only=True)
    assert [(o.provider, o.offer_set) for o in best] == [("omega", "later")]
    ties_only = [s.id for s in store.current() if s.feed == "ties"]
    assert [o.provider for o in store.read(ties_only, cheapest_only=True)[1]] == ["zeta"]
    assert [o.provider for o in store.read(ties_only)[1]] == ["zeta", "alpha", "mid"]


def test_every_refresh_adds_a_dated_snapshot_and_history_keeps_them_all(store):
    for day, price in enumerate((3.0, 2.8, 2.5)):
        out = record(store, feed(price, fetched_at=T0 + timedelta(days=day)))
        assert out.status == "updated"
    assert len(store.snapshots("test")) == 3
    (current,) = store.current()
    assert current.offer_count == 3
    points = store.history(["h100-sxm"])
    assert [p.cheapest.amount for p in points] == [3.0, 2.8, 2.5]
    assert [p.offers for p in points] == [3, 3, 3] and points[0].median == Money(3.01, "USD")
    assert [p.fetched_at.day for p in points] == [(T0 + timedelta(days=d)).day for d in range(3)]


def test_refresh_reports_what_changed(store):
    record(store, feed(3.0))
    new = feed(2.7)
    new.offers += offers(1.0, gpu="l4", feed="test")
    out = record(store, new)
    assert out.added == ["l4"]
    (move,) = out.moved
    assert (move.gpu, move.before, move.after) == ("h100-sxm", 3.0, 2.7)


def test_a_failed_refresh_keeps_the_previous_data_and_records_why(store):
    first = record(store, feed(3.0))
    out = record(store, feed(None, error="HTTP 503 Service Unavailable"))
    assert out.status == "failed" and out.previous.id == first.snapshot.id
    (current,) = store.current()
    assert current.id == first.snapshot.id and len(store.read()[1]) == 3
    last = store.last_attempts()["test"]
    assert last.status == "failed" and "503" in last.message


@pytest.mark.parametrize(("bad", "why"), [
    (feed(None), "no offers"),
    (feed(300.0), "unit error"),  # 100x the last snapshot
    (feed(0.03), "unit error"),  # cents read as dollars, the other way
    (feed(3.0, n=100), None),  # more offers is fine
])
def test_nonsense_is_rejected_and_the_previous_snapshot_stays(store, bad, why):
    base = record(store, feed(3.0, n=10))
    out = record(store, bad)
    if why is None:
        assert out.status == "updated"
        return
    assert out.status == "rejected" and why in out.message
    assert store.current()[0].id == base.snapshot.id
    assert {o.price_per_hour.amount for o in store.read()[1]} == {3.0 + i / 100
                                                                  for i in range(10)}


def test_losing_most_offers_is_rejected_unless_forced(store):
    record(store, feed(3.0, n=50))
    assert record(store, feed(3.0, n=5)).status == "rejected"
    assert record(store, feed(3.0, n=5), force=True).status == "updated"
    assert record(store, feed(None), force=True).status == "rejected"  # never empty


def test_guards_are_configurable(store):
    record(store, feed(3.0))
    assert record(store, feed(9.0), guards=Guards(max_price_factor=2)).status == "rejected"
    assert record(store, feed(9.0), guards=Guards(max_price_factor=4)).status == "updated"


def test_a_source_that_raises_is_recorded_and_does_not_block_the_others(store):
    report = refresh([ListSource("broken", RuntimeError("boom")),
                      ListSource("fine", [feed(2.0, name="fine")])], store)
    assert [o.status for o in report.outcomes] == ["failed", "updated"]
    assert "RuntimeError: boom" in report.outcomes[0].message and not report.ok
    assert [s.feed for s in store.current()] == ["fine"]


def test_half_failing_gpuhunt_refresh_updates_the_good_providers_only(store, tmp_path):
    refresh([GpuhuntSource(catalog_dir=GPUHUNT_DIR)], store)
    before = {s.feed: s.id for s in store.current()}
    half = tmp_path / "half"
    half.mkdir()
    (half / "aws.csv").write_text((GPUHUNT_DIR / "aws.csv").read_text())
    (half / "runpod.csv").write_text("instance_name,location\nNVIDIA H100 PCIe,US\n")
    report = refresh([GpuhuntSource(["aws", "runpod", "gcp"], catalog_dir=half)], store)
    status = {o.feed: o.status for o in report.outcomes}
    assert status == {"gpuhunt/aws": "updated", "gpuhunt/runpod": "failed",
                      "gpuhunt/gcp": "failed"}
    after = {s.feed: s.id for s in store.current()}
    assert after["gpuhunt/aws"] != before["gpuhunt/aws"]
    for kept in ("gpuhunt/runpod", "gpuhunt/gcp", "gpuhunt/lambdalabs"):
        assert after[kept] == before[kept]


def test_unmapped_names_are_stored_with_the_snapshot(store):
    refresh([GpuhuntSource(["lambdalabs"], catalog_dir=GPUHUNT_DIR)], store)
    (snap,) = store.current()
    assert snap.unmapped_count == 1
    assert {u.name for u in store.unmapped(snap.id)} == {"GH200"}


def test_a_feed_name_cannot_be_taken_over_by_another_source(store):
    record(store, feed(3.0, name="quotes"))
    intruder = feed(2.0, name="quotes")
    intruder.source = "someone-else"
    out = record(store, intruder)
    assert out.status == "failed" and "belongs to source 'unit'" in out.message


def test_prune_keeps_the_newest_and_the_current_snapshots(store):
    for price in (3.0, 2.9, 2.8, 2.7):
        record(store, feed(price))
    record(store, feed(None, error="down"))
    assert store.prune(keep=2) == 3
    assert [s.status for s in store.snapshots("test")] == ["failed", "ok"]
    assert store.read()[1][0].price_per_hour.amount == 2.7


def test_two_processes_seeding_a_fresh_store_store_the_shipped_sets_once(store):
    from whichgpu.catalog.prices.shipped import ShippedSource

    results = list(ShippedSource().fetch())
    first = [store.save_if_changed(r) for r in results]
    again = [record(store, r, skip_unchanged=True) for r in results]
    assert all(first) and store.save_if_changed(results[0]) is None
    assert {o.status for o in again} == {"unchanged"}
    assert len(store.snapshots()) == 2
