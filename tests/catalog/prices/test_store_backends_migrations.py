"""Schema migrations on both engines: a store written at schema 1 or 2 by an older whichgpu
is upgraded in place to the latest, keeping every stored row (snapshots, offers, unmapped
names, current pointers, URL sources) and the order its offers were stored in, which
decides equal-price ties alike on both engines."""

import sqlite3

import pytest

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices import schema as schema_mod
from whichgpu.catalog.prices.sources import FeedResult, utc_now
from whichgpu.units import Money

# (snapshot, provider, gpu, price, instance type at schema 2): two snapshots of one feed,
# the current one with equal prices whose first stored offer must win a tie.
OFFERS = [
    (1, "old-a", "l4", 0.9, "g6.xlarge"),
    (1, "old-b", "h100-sxm", 3.0, None),
    (2, "zeta", "h100-sxm", 2.0, "z.h100"),
    (2, "alpha", "h100-sxm", 2.0, "a.h100"),
    (2, "mid", "a100-80gb-sxm", 1.2, None),
    (2, "beta", "l4", 0.7, "b.l4"),
]

TABLES = {"snapshot": "id, feed, status, fetched_at, offer_count, message",
          "offer": "snapshot_id, provider, gpu, price_per_hour",
          "unmapped": "snapshot_id, name, rows", "current": "feed, snapshot_id",
          "url_source": "name, url"}


def _connect(store_url: str):
    """A DB-API connection with ``?`` placeholders on either engine."""
    if store_url.startswith("postgresql"):
        import psycopg

        con = psycopg.connect(store_url, autocommit=True)

        class Qmark:
            def execute(self, sql, args=()):
                return con.execute(sql.replace("?", "%s"), list(args) or None)

            def close(self):
                con.close()
        return Qmark(), "postgresql"
    con = sqlite3.connect(store_url, isolation_level=None)
    return con, "sqlite"


def _old_store(store_url: str, version: int) -> None:
    """A store as whichgpu wrote it at schema ``version`` (1 or 2), with rows in every table."""
    con, dialect = _connect(store_url)
    for statement in schema_mod.steps(dialect, 0, schema_mod.MIGRATIONS[:version]):
        con.execute(statement)
    for sid, fetched in ((1, "2026-10-01T00:00:00Z"), (2, "2026-11-01T00:00:00Z")):
        con.execute("INSERT INTO snapshot (id, feed, source, kind, status, fetched_at, "
                    "observed_at, offer_count, unmapped_count) VALUES "
                    "(?, 'feed', 'unit', 'test', 'ok', ?, ?, ?, 1)",
                    (sid, fetched, fetched, sum(1 for o in OFFERS if o[0] == sid)))
    con.execute("INSERT INTO snapshot (id, feed, source, kind, status, fetched_at, message) "
                "VALUES (3, 'feed', 'unit', 'test', 'failed', '2026-11-15T00:00:00Z', 'down')")
    cols = "snapshot_id, provider, gpu, gpu_count, price_per_hour, currency, " \
           "billing_increment_s, billing_minimum_s, spot, observed_at"
    for sid, provider, gpu, price, instance in OFFERS:
        args = [sid, provider, gpu, 1, price, "USD", 1.0, 0.0, 0, "2026-11-01T00:00:00Z"]
        if version >= 2:
            con.execute(f"INSERT INTO offer ({cols}, instance_type) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [*args, instance])
        else:
            con.execute(f"INSERT INTO offer ({cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        args)
    for sid in (1, 2):
        con.execute("INSERT INTO unmapped (snapshot_id, provider, name, reason, rows) VALUES "
                    "(?, 'p', 'Mystery GPU', 'unknown', 2)", (sid,))
    con.execute("INSERT INTO current (feed, snapshot_id) VALUES ('feed', 2)")
    con.execute("INSERT INTO url_source (name, url, allow_http, added_at) VALUES "
                "('team', 'https://prices.example/team.json', 0, '2026-10-01T00:00:00Z')")
    if dialect == "postgresql":
        con.execute("CREATE TABLE whichgpu_schema (version INTEGER NOT NULL)")
        con.execute("INSERT INTO whichgpu_schema (version) VALUES (?)", (version,))
        # the identity sequences must follow the explicit ids, as whichgpu's own inserts did
        con.execute("SELECT setval(pg_get_serial_sequence('snapshot', 'id'), 3)")
    else:
        con.execute(f"PRAGMA user_version = {version}")
    con.close()


def _rows(store_url: str, table: str, columns: str) -> list[tuple]:
    con, _ = _connect(store_url)
    try:
        return sorted(tuple(r) for r in con.execute(f"SELECT {columns} FROM {table}"))
    finally:
        con.close()


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_store_is_upgraded_keeping_every_row_and_the_offers_order(store_url, version):
    _old_store(store_url, version)
    kept = {t: _rows(store_url, t, c) for t, c in TABLES.items()}

    store = PriceStore(store_url)
    assert store.schema_version() == len(schema_mod.MIGRATIONS) >= 3
    for table, columns in TABLES.items():  # every row of every table is still there
        assert _rows(store_url, table, columns) == kept[table], table
    assert _rows(store_url, "offer", "seq IS NULL") == [(False,)] * len(OFFERS)

    snaps, offers = store.read()
    assert [s.id for s in snaps] == [2]
    assert [o.provider for o in offers] == [p for s, p, *_ in OFFERS if s == 2]  # stored order
    expected_types = [i if version >= 2 else None for s, _, _, _, i in OFFERS if s == 2]
    assert [o.instance_type for o in offers] == expected_types
    cheapest = store.read(cheapest_only=True, gpus=["h100-sxm"])[1]
    assert [o.provider for o in cheapest] == ["zeta"]  # of equal prices, the first stored
    assert [o.provider for o in store.read([1])[1]] == ["old-a", "old-b"]
    assert len(store.unmapped(2)) == 1 and store.url_sources()[0][0] == "team"
    assert [s.status for s in store.snapshots("feed")] == ["failed", "ok", "ok"]

    # and the upgraded store goes on: a new snapshot numbers its offers too
    new = store.save(FeedResult(feed="feed", source="unit", kind="test", fetched_at=utc_now(),
                                offers=[Offer(provider=p, gpu="h100-sxm",
                                              price_per_hour=Money(1.5, "USD"),
                                              observed_at="2026-11-30") for p in ("y", "x")]))
    assert new.id == 4 and [o.provider for o in store.read()[1]] == ["y", "x"]
    assert [o.provider for o in store.read(cheapest_only=True)[1]] == ["y"]
