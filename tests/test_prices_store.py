"""The SQLite price store: snapshots with history, guards, and nothing lost when a refresh fails."""

import os
import sqlite3
from collections.abc import Iterator
from datetime import timedelta

import pytest

from prices_support import GPUHUNT_DIR
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices import store as store_mod
from whichgpu.catalog.prices.gpuhunt_source import GpuhuntSource
from whichgpu.catalog.prices.refresh import Guards, record, refresh
from whichgpu.catalog.prices.sources import FeedResult, PriceSource, iso, utc_now
from whichgpu.catalog.prices.store import StoreError
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


@pytest.fixture
def store(tmp_path) -> PriceStore:
    return PriceStore(tmp_path / "prices.sqlite")


def test_fresh_store_is_created_at_the_latest_schema_in_wal_mode(store):
    assert store.schema_version() == len(store_mod.MIGRATIONS) == 2
    con = sqlite3.connect(store.path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_store_lives_in_the_data_directory_and_can_be_moved(tmp_path, monkeypatch):
    assert PriceStore().path == tmp_path / "whichgpu-home" / "prices.sqlite"
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(tmp_path / "elsewhere.sqlite"))
    assert PriceStore().path == tmp_path / "elsewhere.sqlite"


def test_an_older_store_is_migrated_and_a_newer_one_refused(store, monkeypatch):
    store.save(feed(2.0))
    extra = ["ALTER TABLE snapshot ADD COLUMN collector TEXT"]
    monkeypatch.setattr(store_mod, "MIGRATIONS", [*store_mod.MIGRATIONS, extra])
    upgraded = PriceStore(store.path)
    assert upgraded.schema_version() == 3
    assert len(upgraded.read()[1]) == 3  # the data survived the migration
    monkeypatch.setattr(store_mod, "MIGRATIONS", store_mod.MIGRATIONS[:2])
    with pytest.raises(StoreError, match="newer whichgpu") as info:
        PriceStore(store.path).current()
    assert "left as it is" in info.value.reason


def test_a_version_1_store_gains_instance_types_and_keeps_its_offers(tmp_path):
    """Schema 2 adds each offer's instance type (what a launcher export names): a store
    written at schema 1 is upgraded in place, its offers kept (instance type unknown), and
    new offers keep theirs."""
    path = tmp_path / "prices.sqlite"
    con = sqlite3.connect(path)
    for statement in store_mod.MIGRATIONS[0]:
        con.execute(statement)
    con.execute("INSERT INTO snapshot (feed, source, kind, status, fetched_at, offer_count) "
                "VALUES ('old', 'unit', 'test', 'ok', ?, 1)", (iso(utc_now()),))
    con.execute("INSERT INTO offer (snapshot_id, provider, gpu, gpu_count, price_per_hour, "
                "currency, billing_increment_s, billing_minimum_s, spot, observed_at) "
                "VALUES (1, 'p', 'a100-80gb-sxm', 1, 1.2, 'USD', 1, 0, 0, '2026-11-30')")
    con.execute("INSERT INTO current (feed, snapshot_id) VALUES ('old', 1)")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    store = PriceStore(path)
    assert store.schema_version() == 2
    kept = store.read()[1]
    assert [(o.gpu, o.instance_type) for o in kept] == [("a100-80gb-sxm", None)]
    typed = Offer(provider="p", gpu="h100-sxm", price_per_hour=Money(2.5, "USD"),
                  instance_type="gpu_1x_h100_sxm5", observed_at="2026-11-30")
    store.save(FeedResult(feed="typed", source="test", kind="test", offers=[typed],
                          fetched_at=utc_now()))
    assert {o.instance_type for o in store.read()[1] if o.offer_set == "typed"} == {
        "gpu_1x_h100_sxm5"}


def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path):
    bad = tmp_path / "prices.sqlite"
    bad.write_text("not a database at all, just text " * 100)
    with pytest.raises(StoreError, match="not a readable price store") as info:
        PriceStore(bad).current()
    assert "move it away" not in str(info.value) and "untouched" in info.value.reason
    assert bad.read_text().startswith("not a database")


@pytest.mark.skipif(os.geteuid() == 0 and not os.environ.get("WHICHGPU_TEST_AS_ROOT_RO"),
                    reason="root ignores directory permissions")
def test_a_read_only_folder_is_said_so_and_never_called_unusable(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    PriceStore(folder / "prices.sqlite").save(feed(2.0))
    folder.chmod(0o555)
    try:
        with pytest.raises(StoreError, match="read-only"):
            PriceStore(folder / "new.sqlite").current()
    finally:
        folder.chmod(0o755)


def test_store_errors_are_classified_without_advising_deletion(tmp_path):
    import sqlite3

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


def test_a_full_disk_during_a_write_keeps_the_store_and_says_so(store, monkeypatch):
    import sqlite3

    store.save(feed(2.0))
    connect = sqlite3.connect

    class Full(sqlite3.Connection):
        def executemany(self, sql, rows):
            raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store_mod.sqlite3, "connect",
                        lambda *a, **k: connect(*a, factory=Full, **k))
    with pytest.raises(StoreError, match="disk is full") as info:
        store.save(feed(3.0))
    assert "no transaction is active" not in str(info.value)
    monkeypatch.undo()
    (snap,) = store.current()
    assert snap.offer_count == 3


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
