"""Issue 36, item 2: reading the price store is as strict as writing it, on both engines.

A value written straight into the store (a hand edit, another tool, a store from before the
import checks) used to take everything down: an invalid JSON in a snapshot's ``skipped``
column made every priced command exit 1, ``serve`` refuse to start and the import that would
replace it fail; a NaN billing step broke that GPU; a $1e-300 row (the table only checks
``> 0``) was everyone's cheapest offer at $0.00. Now the bad row or value is left out with a
warning naming its feed, everything else answers, and the next import replaces it.
"""

from __future__ import annotations

import sqlite3

import pytest

from prices_support import write_offers
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.selection import current_offers

HEADER = ("provider,gpu,gpu_count,price_per_hour,currency,billing_increment_s,"
          "billing_minimum_s,spot,region,observed_at\n")
ROWS = ("acme-h36,H100-SXM,1,2.10,USD,1,0,false,,2026-12-01",
        "beta-h36,H100-SXM,1,2.50,USD,60,0,false,,2026-12-01",
        "gamma-h36,H100-SXM,1,2.90,USD,1,0,false,,2026-12-01")


def _sql(store_url: str, sql: str, args: tuple = ()) -> None:
    """Write into the store behind whichgpu's back (the way a damaged row gets there)."""
    if store_url.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as con:
            con.execute(sql.replace("?", "%s"), args)
    else:
        with sqlite3.connect(store_url) as con:
            con.execute(sql, args)


@pytest.fixture
def damaged(cli, tmp_path, monkeypatch, store_url):
    """A store whose imported feed 'team' has an unreadable ``skipped`` column, a $1e-300 row
    (acme) and a NaN billing step (beta); gamma's row is sound."""
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", store_url)
    offers = write_offers(tmp_path / "team.csv", *ROWS, header=HEADER)
    assert cli("prices", "import", str(offers), "--name", "team").code == 0
    snap = PriceStore(store_url).current_of("team")
    assert snap is not None
    _sql(store_url, "UPDATE snapshot SET skipped = ? WHERE id = ?", ("{bad json", snap.id))
    _sql(store_url, "UPDATE offer SET price_per_hour = 1e-300 WHERE snapshot_id = ? AND "
         "provider = 'acme-h36'", (snap.id,))
    _sql(store_url, "UPDATE offer SET billing_increment_s = 'NaN' WHERE snapshot_id = ? AND "
         "provider = 'beta-h36'", (snap.id,))
    return store_url


def _team(offers) -> list[str]:
    return sorted(o.provider for o in offers if o.offer_set == "team")


def test_a_damaged_row_is_left_out_with_a_warning_naming_its_feed(damaged):
    every = current_offers(store=PriceStore(damaged), gpus=["h100-sxm"])
    assert _team(every.offers) == ["gamma-h36"]
    for sel in (every, current_offers(store=PriceStore(damaged), gpus=["h100-sxm"],
                                      cheapest_only=True)):
        # the $1e-300 row neither shows nor hides the real cheapest offer of its kind
        cheapest = every.cheapest("h100-sxm", spot=False, currency="USD")
        assert sel.cheapest("h100-sxm", spot=False, currency="USD") == cheapest
        assert cheapest is not None and cheapest.price_per_gpu_hour.amount >= 0.01
        said = [str(w) for w in sel.warnings if str(w).startswith("team:")]
        assert any("skipped rows" in w for w in said), sel.warnings
        assert any("2 stored offer(s)" in w and "left out" in w for w in said), sel.warnings


def test_an_offer_observed_in_the_future_is_left_out_as_an_import_would_refuse_it(damaged):
    snap = PriceStore(damaged).current_of("team")
    assert snap is not None
    (point,) = PriceStore(damaged).history(["h100-sxm"], feed="team", dated=None)
    assert point.cheapest_provider == "gamma-h36" and point.offers == 1  # the sound row only
    _sql(damaged, "UPDATE offer SET observed_at = '9999-12-31' WHERE snapshot_id = ? AND "
         "provider = 'gamma-h36'", (snap.id,))
    sel = current_offers(store=PriceStore(damaged), gpus=["h100-sxm"])
    assert _team(sel.offers) == []
    assert any("3 stored offer(s)" in str(w) for w in sel.warnings), sel.warnings
    history = PriceStore(damaged).history(["h100-sxm"], feed="team", dated=None)
    assert history == []


def test_every_priced_command_answers_on_the_damaged_store(cli, damaged):
    listed = cli("prices", "list", "h100-sxm", "--json")
    assert listed.code == 0, listed.err
    data = listed.json()
    # the $1e-300 row was shown to everyone as the cheapest offer at $0.00
    assert min(o["price_per_gpu_hour"]["amount"] for o in data["offers"]) >= 0.01
    assert "acme-h36" not in {o["provider"] for o in data["offers"]}
    assert "gamma-h36" in {o["provider"] for o in data["offers"]}
    assert any(w.startswith("team:") for w in data["prices"]["warnings"])
    for args in (("gpus", "--json"), ("prices", "sources", "--json"),
                 ("prices", "history", "h100-sxm", "--json")):
        res = cli(*args)
        assert res.code == 0, (args, res.err)
    history = cli("prices", "history", "h100-sxm", "--json").json()
    assert "1e-300" not in str(history)


def test_an_import_replaces_the_damaged_snapshot(cli, tmp_path, damaged):
    again = write_offers(tmp_path / "team2.csv", *ROWS, header=HEADER)
    res = cli("prices", "import", str(again), "--name", "team")
    assert res.code == 0, res.err
    sel = current_offers(store=PriceStore(damaged), gpus=["h100-sxm"])
    assert _team(sel.offers) == ["acme-h36", "beta-h36", "gamma-h36"]
    assert not [w for w in sel.warnings if str(w).startswith("team:")]


def test_serve_starts_on_the_damaged_store_and_says_what_it_left_out(damaged):
    from whichgpu.web.server import _open_store

    notes: list[str] = []
    _open_store(notes.append)
    assert any(n.startswith("team:") and "skipped rows" in n for n in notes), notes
    assert any(n.startswith("team:") and "2 stored offer(s)" in n for n in notes), notes


def test_the_web_answers_on_the_damaged_store(web, damaged):
    api = web.get("/api/v1/prices", params={"gpu": "h100-sxm"})
    assert api.status_code == 200, api.text
    amounts = [o["price_per_gpu_hour"]["amount"] for o in api.json()["offers"]]
    assert amounts and min(amounts) >= 0.01
    for page in ("/prices?gpu=h100-sxm", "/?model=7B&unit=tokens&amount=9M"):
        r = web.get(page, headers={"accept": "text/html"})
        assert r.status_code == 200, (page, r.status_code)
    assert web.get("/readyz").status_code == 200
