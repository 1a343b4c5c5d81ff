"""What every priced answer checks against the store, from the parse cache (issue 27): the
shipped market snapshot's feeds and the published price table's last digests equal a fresh
parse of the files, so the store is seeded and kept exactly as before."""

from __future__ import annotations

import pytest

from whichgpu.catalog.prices import market, published
from whichgpu.parse_cache import DISABLE_ENV


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    market.market_feeds.cache_clear()
    published.published_marks.cache_clear()
    yield
    market.market_feeds.cache_clear()
    published.published_marks.cache_clear()


def test_the_market_feeds_read_back_from_the_cache_equal_a_parse(tmp_path):
    written = market.market_feeds()  # parsed, then kept
    market.market_feeds.cache_clear()
    read_back = market.market_feeds()
    assert list((tmp_path / "home").rglob("market-feeds-*.pickle"))  # it was kept
    parsed = market._parse_feeds()
    assert len(parsed) > 1
    for feeds in (written, read_back):
        assert [(f.feed, f.meta, f.digest, f.rows) for f in feeds] == \
            [(f.feed, f.meta, f.digest, f.rows) for f in parsed]


def test_the_published_marks_are_each_feeds_last_point_as_the_store_keeps_them():
    points = published.published_points()
    expected = {}
    for p in sorted(points, key=lambda p: (p.result.fetched_at, p.row)):
        expected[p.result.feed] = p.result.digest
    assert published.published_marks() == expected  # parsed, then kept
    published.published_marks.cache_clear()
    assert published.published_marks() == expected  # read back
    assert set(expected) == {p.result.feed for p in points} and len(expected) >= 2


def test_a_store_seeded_with_the_cache_holds_what_it_held_before(tmp_path):
    from whichgpu.catalog.prices.selection import current_offers, ensure_shipped, open_store

    store = open_store(tmp_path / "prices.db")
    ensure_shipped(store)  # seeded: every shipped feed, with the digests compared
    have = {s.feed: s.digest for s in store.current()}
    assert {f.feed: f.digest for f in market.market_feeds()}.items() <= have.items()
    assert published.published_marks().items() <= have.items()
    ensure_shipped(store)  # nothing to do the second time
    assert {s.feed: s.digest for s in store.current()} == have
    assert current_offers(None, store=store).offers
