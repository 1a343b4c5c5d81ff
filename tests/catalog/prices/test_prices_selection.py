"""current_offers(): what every command prices with, how old it is, and when to warn."""

from datetime import UTC, datetime, timedelta

import pytest

from prices_support import DATA, GPUHUNT_DIR, write_offers
from whichgpu.catalog.prices import PriceStore, current_offers
from whichgpu.catalog.prices.gpuhunt_source import GpuhuntSource
from whichgpu.catalog.prices.imports import import_file
from whichgpu.catalog.prices.market import market_feed_names, market_feeds
from whichgpu.catalog.prices.refresh import record, refresh
from whichgpu.catalog.prices.selection import get_offers
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


# ------------------------------------------------------------------ narrowed reads (issue 21)

def _feed(name: str, provider: str, rows: list[tuple], observed: str, kind: str = "url"):
    """A feed of ``rows``: (gpu, count, price, spot, increment_s, minimum_s, currency)."""
    from whichgpu.catalog.billing import BillingRule
    from whichgpu.catalog.offers import Offer

    offers = [Offer(provider=provider, gpu=g, gpu_count=n, price_per_hour=Money(p, cur),
                    billing=BillingRule(increment_s=inc, minimum_s=mn), spot=spot,
                    region=f"r{i}", observed_at=observed, source="test", offer_set=name)
              for i, (g, n, p, spot, inc, mn, cur) in enumerate(rows)]
    return FeedResult(feed=name, source=name.split("/")[0], kind=kind, offers=offers)


def _market_store(tmp_path) -> PriceStore:
    import random

    rng = random.Random(3)
    store = PriceStore(tmp_path / "p.sqlite")
    gpus = ["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s", "rtx-a6000"]
    for f in range(4):
        rows = [(rng.choice(gpus), rng.choice((1, 2, 8)), round(rng.uniform(0.3, 9), 2),
                 rng.random() < 0.3, rng.choice((1, 60)), rng.choice((0, 60)),
                 rng.choice(("USD", "USD", "EUR"))) for _ in range(150)]
        store.save(_feed(f"quotes-{f}", f"provider-{f}", rows, "2026-11-29"))
    return store


def test_an_offer_beaten_for_every_run_is_left_out_and_no_other():
    from whichgpu.catalog.billing import BillingRule
    from whichgpu.catalog.offers import Offer
    from whichgpu.catalog.prices.selection import undominated

    def offer(price, inc, minimum):
        return Offer(provider="p", gpu="l4", price_per_hour=Money(price, "USD"),
                     billing=BillingRule(increment_s=inc, minimum_s=minimum))

    fine, coarse, cheap_coarse, odd = offer(1.0, 1, 0), offer(1.2, 60, 0), offer(0.9, 3600, 0), \
        offer(1.1, 40, 0)
    kept = undominated([fine, coarse, cheap_coarse, offer(1.0, 1, 60), odd])
    # dearer and coarser (60 s, 40 s steps, a 60 s minimum) go, as the 1 s step divides theirs;
    # the cheaper hourly one stays: it wins a long run
    assert kept == [fine, cheap_coarse]
    assert undominated([odd, offer(1.0, 60, 0)]) == [odd, offer(1.0, 60, 0)]  # 40 s vs 60 s


def test_the_store_narrows_a_read_as_the_same_filter_on_every_offer_would(tmp_path):
    from whichgpu.catalog.prices.selection import narrow

    store = _market_store(tmp_path)
    full = current_offers(store=store, now=NOW)
    for gpus in (None, ["h100-sxm", "rtx-4090"], []):
        cheap = current_offers(store=store, now=NOW, gpus=gpus, cheapest_only=True)
        expected = narrow(list(full.offers), gpus, True)
        key = lambda o: (o.gpu, o.gpu_count, o.price_per_hour.currency, o.spot,  # noqa: E731
                         o.billing.increment_s, o.billing.minimum_s, o.price_per_hour.amount)
        assert sorted(map(key, cheap.offers)) == sorted(map(key, expected))
        assert len(cheap.offers) < len(full.offers)
        assert cheap.to_json()["narrowed"] and cheap.to_json()["offers_read"] == len(cheap.offers)
    only = current_offers(store=store, now=NOW, gpus=["l40s"])
    assert {o.gpu for o in only.offers} == {"l40s"}
    assert len(only.offers) == sum(o.gpu == "l40s" for o in full.offers)


def test_a_narrowed_read_gives_the_same_recommendation_as_every_offer(tmp_path):
    from whichgpu.advise.recommend import recommend
    from whichgpu.answers.inputs.job import build_job
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.models.resolve import resolve_model

    store = _market_store(tmp_path)
    full = current_offers(store=store, now=NOW).in_currency("USD", _usd)
    cheap = current_offers(store=store, now=NOW, cheapest_only=True).in_currency("USD", _usd)
    w = build_workload(resolve_model("llama-3.1-8b"), quant="awq")
    job = build_job(w, tokens="5M")
    a, b = recommend(job, list(full.offers)), recommend(job, list(cheap.offers))
    # the same configurations at the same hourly price and cost (of two offers that cost the
    # same, either may be named)
    assert [(o.gpu.id, o.count, o.price_per_hour, o.cost.typical) for o in a.options] == \
        [(o.gpu.id, o.count, o.price_per_hour, o.cost.typical) for o in b.options]
    assert a.options  # the job has options to compare


def _usd(money, currency):
    from whichgpu.currency import convert

    return convert(money, currency)


def test_a_provider_priced_by_a_newer_feed_keeps_the_other_providers_of_the_older_one(tmp_path):
    """A gpuhunt-like feed prices Alpha and Beta; a newer feed prices Alpha alone: Alpha comes
    from the newer feed, and Beta's offer still counts, also in a narrowed read (where the
    superseded Alpha offer, the cheapest of all, must not hide Beta's)."""
    from whichgpu.catalog.billing import BillingRule
    from whichgpu.catalog.offers import Offer

    store = PriceStore(tmp_path / "p.sqlite")
    old = [Offer(provider=p, gpu="rtx-4090", price_per_hour=Money(price, "USD"),
                 billing=BillingRule(), observed_at="2026-11-20", offer_set="hunt/all")
           for p, price in (("Alpha Cloud", 0.05), ("Beta Cloud", 0.06))]
    store.save(FeedResult(feed="hunt/all", source="hunt", kind="url", offers=old))
    store.save(_feed("fresh/alpha", "alpha-cloud", [("rtx-4090", 1, 0.69, False, 1, 0, "USD")],
                     "2026-11-29"))
    for cheapest in (False, True):
        sel = current_offers(store=store, now=NOW, gpus=["rtx-4090"], cheapest_only=cheapest)
        got = sorted((o.provider, o.price_per_hour.amount) for o in sel.offers
                     if o.offer_set in ("hunt/all", "fresh/alpha"))
        expected = [("Beta Cloud", 0.06)] if cheapest else [("Beta Cloud", 0.06),
                                                            ("alpha-cloud", 0.69)]
        assert got == expected
        assert any("hunt/all: alphacloud prices superseded by the newer fresh/alpha" in w
                   for w in sel.warnings), sel.warnings


def test_priced_commands_read_only_the_gpus_they_need(cli, tmp_path, monkeypatch):
    store = tmp_path / "p.sqlite"
    PriceStore(store).save(_feed("quotes", "acme", [
        (g, 1, 1.0 + i / 10, False, 1, 0, "USD")
        for i, g in enumerate(["h100-sxm", "rtx-4090", "l40s", "a40"])], "2026-11-29"))
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(store))
    cost = cli("cost", "--gpu", "rtx-4090", "--duration", "2h", "--json")
    tco = cli("tco", "l40s", "--json")
    rec = cli("recommend", "llama-3.1-8b", "--quant", "awq", "--only", "rtx-4090,l40s",
              "--json")
    assert cost.code == tco.code == rec.code == 0, (cost.err, tco.err, rec.err)
    assert cost.json()["price_selection"]["narrowed"].startswith("only rtx-4090;")
    assert tco.json()["price_selection"]["narrowed"].startswith("only l40s;")
    assert rec.json()["prices"]["narrowed"].startswith("only l40s, rtx-4090;")
    assert cost.json()["offer"]["gpu"] == "rtx-4090"
    assert {o["gpu"] for o in rec.json()["options"]} <= {"rtx-4090", "l40s"}
