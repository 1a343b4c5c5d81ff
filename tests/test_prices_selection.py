"""current_offers(): what every command prices with, how old it is, and when to warn."""

from datetime import UTC, datetime, timedelta

import pytest

from prices_support import DATA, GPUHUNT_DIR, write_offers
from whichgpu.catalog.offers import get_offers
from whichgpu.catalog.prices import PriceStore, current_offers
from whichgpu.catalog.prices.gpuhunt_source import GpuhuntSource
from whichgpu.catalog.prices.imports import import_file
from whichgpu.catalog.prices.market import market_feed_names, market_feeds
from whichgpu.catalog.prices.refresh import record, refresh
from whichgpu.catalog.prices.sources import FeedResult
from whichgpu.catalog.prices.store import StoreError
from whichgpu.errors import DataError, InputError, NotFoundError
from whichgpu.units import Money

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_a_fresh_install_prices_from_the_shipped_market_snapshot_offline():
    sel = current_offers(now=NOW)
    assert {f.feed for f in sel.feeds} == set(market_feed_names())
    assert PriceStore().path.exists()  # seeded on first use
    assert all(not f.undated and f.source == "skypilot" for f in sel.feeds)
    assert len(sel.offers) == sum(len(f.offers) for f in market_feeds())
    # the article sets are in the store, but only on request
    assert {f.feed for f in current_offers("shipped", now=NOW).feeds} == {
        "article-000", "vramfarm-2026-11"}
    vram = current_offers("vramfarm-2026-11", now=NOW).feed("vramfarm-2026-11")
    assert vram.age_s == pytest.approx(18.5 * 86400) and not vram.stale
    art = current_offers("article-000", now=NOW)
    assert art.feed("article-000").undated
    assert any("article-000" in w and "no observation date" in w for w in art.warnings)


def test_prices_older_than_the_threshold_are_flagged():
    later = NOW + timedelta(days=40)
    sel = current_offers("vramfarm-2026-11", now=later)
    assert sel.feed("vramfarm-2026-11").stale
    (warning,) = sel.warnings
    assert "58 d" in warning and "older than 30 days" in warning
    assert not current_offers("vramfarm-2026-11", now=later, max_age_days=90).warnings


def test_the_threshold_can_be_set_in_the_environment(monkeypatch):
    monkeypatch.setenv("WHICHGPU_PRICE_MAX_AGE_DAYS", "7")
    assert current_offers("vramfarm-2026-11", now=NOW).feed("vramfarm-2026-11").stale
    monkeypatch.setenv("WHICHGPU_PRICE_MAX_AGE_DAYS", "soon")
    with pytest.raises(InputError, match="WHICHGPU_PRICE_MAX_AGE_DAYS"):
        current_offers(now=NOW)


def test_pinning_a_feed_a_source_or_a_snapshot():
    store = PriceStore()
    refresh([GpuhuntSource(catalog_dir=GPUHUNT_DIR)], store)
    everything = current_offers()
    assert {f.feed for f in everything.feeds} >= {"gpuhunt/aws", "skypilot/runpod"}
    assert {f.feed for f in current_offers("gpuhunt/aws").feeds} == {"gpuhunt/aws"}
    assert len(current_offers("gpuhunt").feeds) == 6
    assert {f.feed for f in current_offers("shipped").feeds} == {"article-000",
                                                                "vramfarm-2026-11"}
    first = current_offers("gpuhunt/aws").feeds[0].snapshot_id
    refresh([GpuhuntSource(["aws"], catalog_dir=GPUHUNT_DIR)], store)
    assert current_offers("gpuhunt/aws").feeds[0].snapshot_id != first
    pinned = current_offers(f"gpuhunt/aws@{first}")
    assert pinned.feeds[0].snapshot_id == first and len(pinned.offers) == 8
    today = datetime.now(UTC).date().isoformat()
    assert current_offers(f"gpuhunt@{today}").feeds[0].feed.startswith("gpuhunt/")
    with pytest.raises(InputError, match="no good snapshot 999"):
        current_offers("gpuhunt/aws@999")
    with pytest.raises(InputError, match="no good snapshot"):
        current_offers("gpuhunt@2001-01-01")


def test_an_unknown_source_suggests_known_ones():
    with pytest.raises(NotFoundError, match="vramfarm-2026-11"):
        current_offers("vramfarm-2026")
    with pytest.raises(NotFoundError, match="vramfarm-2026-11"):
        get_offers("vramfarm-2026")


def test_an_offer_file_can_be_used_directly_without_storing_it():
    sel = current_offers(str(DATA / "quotes.csv"), now=NOW)
    assert sel.feeds[0].snapshot_id is None and len(sel.offers) == 5
    assert "quotes" not in {s.feed for s in PriceStore().current()}


def test_imported_quotes_join_the_latest_prices():
    import_file(DATA / "quotes.csv", observed_at="2026-11-29")
    sel = current_offers(now=NOW)
    assert sel.feed("quotes").offer_count == 5
    assert sel.cheapest("h100-pcie", currency="USD").provider == "Acme Cloud"


def test_a_failed_refresh_is_shown_as_a_warning_next_to_the_data_it_kept():
    store = PriceStore()
    refresh([GpuhuntSource(["aws"], catalog_dir=GPUHUNT_DIR)], store)
    record(store, FeedResult("gpuhunt/aws", "gpuhunt", "gpuhunt", error="HTTP 503"))
    sel = current_offers("gpuhunt/aws")
    assert len(sel.offers) == 8
    assert any("last refresh failed (HTTP 503)" in w for w in sel.warnings)


def test_currencies_are_never_compared_without_a_rate():
    sel = current_offers("shipped", now=NOW)
    with pytest.raises(InputError, match="EUR, USD"):
        sel.cheapest("h100-sxm")
    assert sel.cheapest("h100-sxm", currency="EUR").price_per_hour == Money(3.90, "EUR")
    eur = sel.in_currency("EUR")
    assert {o.price_per_hour.currency for o in eur.offers} == {"EUR"}
    assert any("9 in USD left out" in w for w in eur.warnings)


def test_a_currency_converter_hook_converts_and_says_so():
    def convert(money: Money, currency: str) -> Money:
        assert (money.currency, currency) == ("USD", "EUR")
        return Money(money.amount * 0.9, "EUR")

    eur = current_offers("shipped", now=NOW).in_currency("EUR", convert)
    h100 = [o for o in eur.offers if o.gpu == "h100-sxm"]
    assert sorted(o.price_per_hour.amount for o in h100) == pytest.approx([2.835, 3.90])
    assert any("converted from $3.15" in (o.note or "") for o in h100)


def test_a_broken_store_falls_back_to_the_shipped_prices(tmp_path):
    bad = tmp_path / "broken.sqlite"
    bad.write_text("garbage " * 500)
    sel = current_offers(store=bad, now=NOW)
    assert {f.feed for f in sel.feeds} == set(market_feed_names())
    assert any("cannot be used" in w and "not a readable price store" in w
               for w in sel.warnings)
    assert not any("move it away" in w for w in sel.warnings)
    assert bad.read_text() == "garbage " * 500  # left untouched
    with pytest.raises(StoreError):
        current_offers("gpuhunt/aws", store=bad)


def test_a_malformed_import_names_the_row_and_stores_nothing(tmp_path):
    path = write_offers(tmp_path / "q.csv", "acme,H100 PCIe,1,2.0,USD,false,,",
                        "acme,L4,1,cheap,USD,false,,")
    with pytest.raises(DataError, match=r"q\.csv, row 3, field 'price_per_hour'"):
        import_file(path)
    assert "q" not in {s.feed for s in PriceStore().snapshots()}
