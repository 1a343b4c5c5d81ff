"""Issue 21, item 5: one bad import breaks nothing.

* an implausible import (currency ZZZ, $1e-300/h, $1e300/h, year 9999, a billing step of
  1e300 s) is refused with a one-line reason naming the row and field, and stores nothing;
* a bad feed already in the store (written straight into it, as a whichgpu that did not yet
  validate imports would have) is left out with a note, and every default-priced command and
  page still answers;
* ``prices remove FEED`` undoes an import, and only an import.
"""

from __future__ import annotations

import pytest

from prices_support import write_offers
from whichgpu.catalog.billing import BillingRule
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.sources import FeedResult
from whichgpu.units import Money

HEADER = ("provider,gpu,gpu_count,price_per_hour,currency,billing_increment_s,"
          "billing_minimum_s,spot,region,observed_at\n")
GOOD = "acme,L4,1,0.50,USD,1,0,false,,2026-11-20"


def _feeds(cli) -> set[str]:
    sources = cli("prices", "sources", "--json").json()["sources"]
    return {f["feed"] for s in sources for f in s["feeds"]}


@pytest.mark.parametrize("row, field, words", [
    ("acme,L4,1,0.50,ZZZ,1,0,false,,2026-11-20", "currency", "ZZZ has no exchange rate"),
    ("acme,L4,1,1e-300,USD,1,0,false,,2026-11-20", "price_per_hour", "outside the plausible"),
    ("acme,L4,1,1e300,USD,1,0,false,,2026-11-20", "price_per_hour", "outside the plausible"),
    ("acme,L4,1,0.50,USD,1,0,false,,9999-01-01", "observed_at", "in the future"),
    ("acme,L4,1,0.50,USD,1e300,0,false,,2026-11-20", "billing_increment_s", "more than a month"),
    ("acme,L4,1,0.50,USD,1,1e300,false,,2026-11-20", "billing_minimum_s", "more than a month"),
])
def test_an_implausible_import_is_refused_in_one_line_and_stores_nothing(cli, tmp_path, row,
                                                                         field, words):
    f = write_offers(tmp_path / "bad.csv", GOOD, row, header=HEADER)
    r = cli("prices", "import", str(f))
    assert r.code == 2, r.err
    assert f"bad.csv, row 3, field '{field}'" in r.err and words in r.err
    assert "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1
    assert "bad" not in _feeds(cli)  # nothing stored, not even the good row
    history = PriceStore().snapshots(feed="bad")
    assert history == []


def test_the_plausible_bounds_keep_every_shipped_market_price():
    """The bounds are derived from the shipped snapshot's range; none of its offers trips them
    (a bound tuned tighter than the market would refuse real prices)."""
    from datetime import UTC, datetime

    from whichgpu.catalog.prices.market import market_feeds
    from whichgpu.catalog.prices.validate import (
        MAX_USD_PER_GPU_HOUR,
        MIN_USD_PER_GPU_HOUR,
        offer_problem,
        usd_per_gpu_hour,
    )

    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    offers = [o for f in market_feeds() for o in f.offers]
    assert offers and all(offer_problem(o, now=now) is None for o in offers)
    prices = [usd_per_gpu_hour(o) for o in offers]
    assert MIN_USD_PER_GPU_HOUR < min(prices) and max(prices) < MAX_USD_PER_GPU_HOUR


def _poison(store: PriceStore) -> None:
    """A feed in ZZZ stored straight into the store, as an unvalidating import once did."""
    offers = [Offer(provider="old import", gpu=g, price_per_hour=Money(0.01, "ZZZ"),
                    billing=BillingRule(), observed_at="2026-11-25", offer_set="legacy")
              for g in ("h100-sxm", "rtx-4090", "a100-80gb-sxm", "l40s")]
    store.save(FeedResult(feed="legacy", source="legacy", kind="file", offers=offers))


def test_a_stored_bad_feed_is_left_out_and_every_priced_command_still_works(cli):
    store = PriceStore()
    assert cli("prices", "list", "--limit", "1").code == 0  # seeds the store
    _poison(store)
    commands = [
        ("recommend", "llama-3.1-70b", "--quant", "awq", "--tokens", "1M", "--json"),
        ("cost", "--gpu", "h100-sxm", "--duration", "3h", "--json"),
        ("tco", "h100-sxm", "--json"),
        ("gpus", "--json"),
        ("checklist", "--workload", "inference", "--model", "70B", "--budget-per-hour", "3USD",
         "--hours-per-month", "200", "--horizon-months", "12", "--json"),
        ("prices", "list", "--json"),
    ]
    for args in commands:
        r = cli(*args)
        assert r.code == 0, (args, r.err)
        text = r.out + r.err
        assert "legacy: left out" in text and "ZZZ" in text, args
        assert "old import" not in r.out  # none of its offers priced anything
    assert cli("prices", "remove", "legacy").code == 0
    r = cli("gpus", "--json")
    assert r.code == 0 and "legacy" not in r.out + r.err


def test_a_stored_bad_feed_breaks_no_page_or_api_answer(web):
    store = PriceStore()
    assert web.get("/api/v1/prices?limit=1").status_code == 200  # seeds the store
    _poison(store)
    from whichgpu.web import services

    services.clear_cache()  # the server notices new snapshots within 10 s; do not wait
    for url in ("/api/v1/recommend?model=llama-3.1-8b&quant=awq&tokens=1M",
                "/api/v1/cost?gpu=rtx-4090&duration=2h", "/api/v1/tco?gpu=h100-sxm",
                "/api/v1/gpus", "/api/v1/prices?gpu=h100", "/api/v1/checklist?workload="
                "inference&model=7B&budget_per_hour=1USD&hours_per_month=50&horizon_months=6",
                "/", "/?model=llama-3.1-8b&quant=awq&unit=tokens&amount=1M", "/prices",
                "/gpus", "/cost?gpu=rtx-4090&duration=2h", "/rent-or-buy?gpu=h100-sxm"):
        r = web.get(url)
        assert r.status_code == 200, (url, r.text[:300])
        assert "old import" not in r.text, url
    body = web.get("/api/v1/gpus").json()
    assert any("legacy: left out" in w for w in body["price_selection"]["warnings"])


def test_prices_remove_undoes_an_import_only(cli, tmp_path):
    f = write_offers(tmp_path / "quotes.csv", GOOD, header=HEADER)
    assert cli("prices", "import", str(f)).code == 0
    assert cli("prices", "import", str(f), "--name", "quotes-2").code == 0
    assert {"quotes", "quotes-2"} <= _feeds(cli)
    r = cli("prices", "remove", "quotes", "--json")
    assert r.code == 0 and r.json()["snapshots_deleted"] == 1
    assert "quotes" not in _feeds(cli) and "quotes-2" in _feeds(cli)
    assert PriceStore().snapshots(feed="quotes") == []  # its history went with it
    # a shipped or refreshed feed is not the user's to delete
    for feed in ("skypilot/runpod", "vramfarm-2026-11"):
        r = cli("prices", "remove", feed)
        assert r.code == 2 and "not an imported feed" in r.err and "prune" in r.err
        assert feed in _feeds(cli)
    # an unknown feed: a clear error with the closest imported names
    r = cli("prices", "remove", "quotes-3")
    assert r.code == 2 and "unknown imported feed 'quotes-3'" in r.err
    assert "did you mean quotes-2" in r.err and "Traceback" not in r.err
