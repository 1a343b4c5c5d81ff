"""The web server's price caches: one selection and one answer per question and snapshot
generation, dropped when a new snapshot is stored, and bounded by bytes (issue 21)."""

from __future__ import annotations

import pytest

from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.sources import FeedResult, utc_now
from whichgpu.units import Money
from whichgpu.web import services


@pytest.fixture
def fresh(monkeypatch):
    """Caches emptied before and after, and the store checked on every call (the server checks
    every OFFER_CACHE_S seconds; the test does not wait for it)."""
    services.clear_cache()
    monkeypatch.setattr(services, "OFFER_CACHE_S", 0.0)
    yield
    services.clear_cache()


def _store_new_snapshot(price: float) -> None:
    offer = Offer(provider="Test Cloud", gpu="h100-sxm", price_per_hour=Money(price, "USD"),
                  observed_at=utc_now().date().isoformat(), source="test")
    PriceStore().save(FeedResult(feed="test/cache", source="test", kind="test",
                                 offers=[offer], fetched_at=utc_now()))


def test_a_new_snapshot_drops_the_cached_selections_and_answers(fresh):
    services.offers(None, cheapest_only=True)  # the first read seeds the store (a new one)
    first = services.offers(None, cheapest_only=True)
    assert services.offers(None, cheapest_only=True) is first  # shared while prices stay
    calls = []
    services.remember("q", ("same",), lambda: calls.append(1) or "answer")
    services.remember("q", ("same",), lambda: calls.append(1) or "answer")
    assert calls == [1] and len(services._memo) == 1

    _store_new_snapshot(1.23)
    second = services.offers(None, cheapest_only=True)
    assert second is not first
    assert any(o.provider == "Test Cloud" and o.price_per_hour.amount == 1.23
               for o in second.offers)
    assert len(services._memo) == 0 and services._memo_bytes[0] == 0  # old answers gone
    services.remember("q", ("same",), lambda: calls.append(1) or "answer")
    assert calls == [1, 1]  # asked again on the new prices


def test_the_answer_cache_never_holds_more_bytes_than_its_bound(fresh, monkeypatch):
    monkeypatch.setattr(services, "MEMO_BYTES", 40_000)
    page = b"x" * 4_000  # a page's HTML is sized by its bytes (+64)
    for i in range(50):
        services.remember("page:/t", (i,), lambda: (page, 200))
        assert services._memo_bytes[0] <= services.MEMO_BYTES
    assert services._memo_bytes[0] == sum(size for _, size in services._memo.values())
    kept = [key[2] for key in services._memo]
    assert kept == list(range(50 - len(kept), 50))  # the newest kept, the oldest dropped
    assert 5 <= len(kept) <= 9
    # an answer larger than an eighth of the bound is computed but never kept
    big = b"y" * 6_000
    services.remember("page:/big", (0,), lambda: (big, 200))
    assert not any(key[0] == "page:/big" for key in services._memo)


def test_the_selection_cache_is_bounded_by_count_and_by_offers(fresh, monkeypatch):
    monkeypatch.setattr(services, "OFFER_SETS", 3)
    gpus = ["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s", "rtx-5090"]
    for g in gpus:
        services.offers(None, gpus=(g,))
    assert len(services._cache) == 3
    assert [key[3] for key in services._cache] == [(g,) for g in gpus[-3:]]
    monkeypatch.setattr(services, "OFFER_SET_OFFERS", 1)
    services.offers(None, gpus=("h200-sxm",))
    assert len(services._cache) == 1  # the newest one is always kept


def test_a_new_snapshot_hands_the_dropped_price_lists_back_once(fresh, monkeypatch):
    """The dropped selections' memory is trimmed back to the system when the generation
    changes (benchmarks/server_rss.py measures what it saves), and only then."""
    calls = []
    monkeypatch.setattr(services, "release_memory", lambda: calls.append(1))
    services.offers(None, cheapest_only=True)
    services.offers(None, cheapest_only=True)
    before = len(calls)
    services.offers(None, cheapest_only=True)
    assert len(calls) == before  # the same prices: nothing dropped, nothing trimmed
    _store_new_snapshot(2.34)
    services.offers(None, cheapest_only=True)
    assert len(calls) == before + 1


def test_a_new_generation_with_nothing_kept_trims_nothing(fresh, monkeypatch):
    """A server's first question (or the first after clear_cache) drops nothing, so it pays no
    full collection (about 0.1 CPU-s per web test, 2026-12-07: half of the web tests' CPU);
    once something is kept, a new snapshot trims as before."""
    calls = []
    monkeypatch.setattr(services, "release_memory", lambda: calls.append(1))
    services.generation()  # a store new to the server
    assert calls == []
    services.offers(None, cheapest_only=True)  # kept
    _store_new_snapshot(3.45)
    services.offers(None, cheapest_only=True)
    assert calls == [1]


def test_release_memory_runs_where_there_is_no_glibc(monkeypatch):
    import gc

    collected = []  # counted, not run: a full collection in a whole-suite test worker
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(a) or 0)  # 0.5-0.7 CPU-s
    monkeypatch.setattr(services, "_malloc_trim", lambda: None)
    services.release_memory()  # a collection only, no error
    assert collected == [()]
