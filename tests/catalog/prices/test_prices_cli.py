"""``whichgpu prices ...`` as a user runs it: offline first, exit codes, no tracebacks."""

import re

import pytest

from prices_support import DATA, GPUHUNT_DIR, Route, serve, write_offers
from whichgpu.catalog.prices.market import market_feed_names


@pytest.fixture
def gpuhunt_files(monkeypatch):
    """gpuhunt reads the recorded catalog files (GPUHUNT_CATALOG_DIR), as air-gapped users do."""
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(GPUHUNT_DIR))


def test_fresh_install_answers_prices_list_h100_offline(cli):
    r = cli("prices", "list", "h100", "--limit", "0")
    assert r.code == 0, r.err
    assert "h100-sxm" in r.out and "h100-pcie" in r.out and "h100-nvl" in r.out
    assert "skypilot/" in r.out and "SkyPilot catalog" in r.err  # where and how old
    assert "h100-sxm, h100-pcie, h100-nvl" in r.err  # the family covers every variant
    assert "Traceback" not in r.err
    art = cli("prices", "list", "h100", "--prices", "shipped")
    assert "€3.90" in art.out and "$3.15" in art.out  # the articles' sets, on request
    assert re.search(r"\d+ d", art.out)  # vramfarm-2026-11, observed 2026-11-12
    assert "undated" in art.out  # article-000 has no date, and says so


def test_prices_list_json_has_age_source_and_currency_on_every_offer(cli):
    data = cli("prices", "list", "h100", "--json").json()
    assert data["gpus"] == ["h100-sxm", "h100-pcie", "h100-nvl"]
    for o in data["offers"]:
        assert o["price_per_gpu_hour"]["currency"] in ("EUR", "USD")
        assert o["offer_set"] and o["source"] and "age_s" in o
    assert {f["feed"] for f in data["prices"]["feeds"]} == set(market_feed_names())
    assert not any(f["undated"] for f in data["prices"]["feeds"])


def test_prices_list_is_cheapest_first_with_live_feeds(cli, gpuhunt_files):
    assert cli("prices", "refresh").code == 0
    data = cli("prices", "list", "h100-sxm", "--currency", "USD", "--limit", "0",
               "--json").json()
    per_gpu = [o["price_per_gpu_hour"]["amount"] for o in data["offers"]]
    assert per_gpu == sorted(per_gpu) and len(per_gpu) > 8
    feeds = {o["offer_set"] for o in data["offers"]}
    assert any(f.startswith("gpuhunt/") for f in feeds)  # refreshed feeds join the market
    assert any(f.startswith("skypilot/") for f in feeds)
    assert any(o["spot"] for o in data["offers"])
    on_demand = cli("prices", "list", "h100-sxm", "--on-demand", "--json").json()["offers"]
    assert on_demand and not any(o["spot"] for o in on_demand)


def test_prices_list_currency_converts_at_dated_rates_and_says_so(cli):
    r = cli("prices", "list", "--currency", "EUR", "--json")
    data = r.json()
    assert {o["price_per_hour"]["currency"] for o in data["offers"]} == {"EUR"}
    assert any("from USD converted to EUR" in w for w in data["prices"]["warnings"])
    converted = [o for o in data["offers"] if (o.get("note") or "").startswith("converted")]
    assert converted  # the USD offers are kept, converted, and marked


def test_prices_refresh_summarises_changes_and_unmapped_names(cli, gpuhunt_files):
    r = cli("prices", "refresh")
    assert r.code == 0, r.err
    assert "gpuhunt/aws" in r.out and "first snapshot" in r.out
    assert "GH200" in r.out and "not guessed" in r.out
    again = cli("prices", "refresh", "--json").json()
    status = {f["feed"]: f["status"] for f in again["feeds"]}
    assert status["article-000"] == "unchanged" and status["gpuhunt/aws"] == "updated"


def test_a_failing_source_exits_1_and_keeps_the_previous_data(cli, gpuhunt_files, tmp_path,
                                                               monkeypatch):
    cli("prices", "refresh", "--source", "gpuhunt/runpod")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "runpod.csv").write_text("something,else\n1,2\n")
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(broken))
    r = cli("prices", "refresh", "--source", "gpuhunt/runpod")
    assert r.code == 1 and "failed" in r.out and "kept" in r.out
    assert "Traceback" not in r.err
    data = cli("prices", "list", "--prices", "gpuhunt/runpod", "--json").json()
    assert len(data["offers"]) == 9
    assert any("last refresh failed" in w for w in data["prices"]["warnings"])


def test_live_sources_never_run_offline(cli):
    r = cli("prices", "refresh", "--source", "gpuhunt")
    assert r.code == 1 and "WHICHGPU_OFFLINE" in r.out


def test_unknown_source_is_exit_2_with_suggestions(cli):
    r = cli("prices", "refresh", "--source", "gpuhnt")
    assert r.code == 2 and "did you mean gpuhunt" in r.err


def test_prices_import_then_list_and_history(cli):
    r = cli("prices", "import", str(DATA / "quotes.csv"))
    assert r.code == 0, r.err
    assert "Imported 5 offers" in r.out and "quotes" in r.out
    listed = cli("prices", "list", "rtx-4090", "--spot", "--prices", "quotes",
                 "--json").json()["offers"]
    assert [(o["provider"], o["spot"]) for o in listed] == [("Acme Cloud", True)]
    assert cli("prices", "import", str(DATA / "quotes.csv")).code == 0
    hist = cli("prices", "history", "h100-pcie", "--feed", "quotes", "--json").json()
    assert [p["feed"] for p in hist["points"]] == ["quotes", "quotes"]
    text = cli("prices", "history", "h100")
    assert text.code == 0 and "quotes" in text.out and "$2.10" in text.out


def test_malformed_import_is_exit_2_naming_the_row_and_nothing_is_stored(cli, tmp_path):
    bad = write_offers(tmp_path / "bad.csv", "acme,H100 PCIe,1,2.0,USD,false,,",
                       "acme,H100,1,2.0,USD,false,,")
    r = cli("prices", "import", str(bad))
    assert r.code == 2 and "bad.csv, row 3, field 'gpu'" in r.err and "ambiguous" in r.err
    assert "Traceback" not in r.err
    sources = cli("prices", "sources", "--json").json()["sources"]
    assert "bad" not in {f["feed"] for s in sources for f in s["feeds"]}
    assert "bad" not in {s["name"] for s in sources}
    missing = tmp_path / "cols.csv"
    missing.write_text("provider,gpu\nacme,l4\n")
    r = cli("prices", "import", str(missing))
    assert r.code == 2 and "missing column(s) price_per_hour, currency" in r.err


def test_an_import_100x_off_the_last_one_is_refused_unless_forced(cli, tmp_path):
    q = write_offers(tmp_path / "q.csv", "acme,L4,1,0.50,USD,false,,")
    assert cli("prices", "import", str(q)).code == 0
    write_offers(q, "acme,L4,1,50,USD,false,,")
    r = cli("prices", "import", str(q))
    assert r.code == 2 and "100x" in r.err and "--force" in r.err
    assert cli("prices", "list", "l4", "--prices", "q", "--json").json()["offers"][0][
        "price_per_hour"]["amount"] == 0.5
    assert cli("prices", "import", str(q), "--force").code == 0


def test_prices_sources_lists_add_and_remove_url_sources(cli):
    r = cli("prices", "sources")
    assert r.code == 0 and "shipped" in r.out and "gpuhunt" in r.out
    assert cli("prices", "sources", "add", "broker", "http://prices.example/p.json").code == 2
    assert cli("prices", "sources", "add", "broker", "https://prices.example/p.json").code == 0
    names = [s["name"] for s in cli("prices", "sources", "--json").json()["sources"]]
    assert "broker" in names
    assert cli("prices", "sources", "remove", "broker").code == 0
    assert cli("prices", "sources", "remove", "broker").code == 2


def test_a_url_source_refreshes_through_the_cli(cli, monkeypatch):
    monkeypatch.delenv("WHICHGPU_OFFLINE")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with serve({"/feed.json": Route((DATA / "feed.json").read_bytes())}) as base:
        assert cli("prices", "sources", "add", "lan", f"{base}/feed.json",
                   "--allow-http").code == 0
        r = cli("prices", "refresh", "--source", "lan")
    assert r.code == 0 and "Rubin CPX" in r.out
    data = cli("prices", "sources", "--unmapped", "--json").json()
    lan = next(s for s in data["sources"] if s["name"] == "lan")
    assert lan["feeds"][0]["offer_count"] == 3
    assert {u["name"] for u in lan["feeds"][0]["unmapped"]} == {"H100", "Rubin CPX"}


def test_gpus_shows_where_its_prices_come_from_and_how_old(cli):
    r = cli("gpus", "--priced-only")
    assert r.code == 0 and "Prices from the SkyPilot catalog" in r.err and "files read" in r.err
    pinned = cli("gpus", "--prices", "vramfarm-2026-11", "--priced-only", "--json").json()
    assert pinned["currency"] == "EUR" and len(pinned["gpus"]) == 5


def test_prices_prune(cli, gpuhunt_files):
    for _ in range(3):
        cli("prices", "refresh", "--source", "gpuhunt/aws")
    r = cli("prices", "prune", "--keep", "1")
    assert r.code == 0 and "Deleted 2" in r.out


def test_an_ambiguous_name_lists_its_variants_once(cli, tmp_path):
    bad = write_offers(tmp_path / "amb.csv", "acme,H100,1,2.0,USD,false,,")
    r = cli("prices", "import", str(bad))
    assert r.code == 2 and "ambiguous: it could be" in r.err
    assert "did you mean" not in r.err and r.err.count("h100-pcie") == 1


def test_a_rejected_refresh_says_once_that_the_previous_snapshot_is_kept(cli, gpuhunt_files,
                                                                         tmp_path, monkeypatch):
    assert cli("prices", "refresh", "--source", "gpuhunt/runpod").code == 0
    shrunk = tmp_path / "shrunk"
    shrunk.mkdir()
    lines = (GPUHUNT_DIR / "runpod.csv").read_text().splitlines()
    (shrunk / "runpod.csv").write_text("\n".join(lines[:2]) + "\n")  # 1 of 9 offers left
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(shrunk))
    r = cli("prices", "refresh", "--source", "gpuhunt/runpod")
    assert r.code == 1 and "rejected" in r.out
    row = " ".join(line for line in r.out.splitlines() if "│" in line)
    assert row.count("kept") == 1 and "previous snapshot #" in row
