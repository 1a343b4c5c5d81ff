"""Per-token API prices in the price store, refreshed from genai-prices' data file (a recorded
real copy, never the network): the refresh gives back the shipped table's prices at the same
upstream commit, a failed refresh keeps what is stored, and the answers say the prices' date
and source (cost/api_prices_refresh.py, catalog/prices/api_store.py)."""

from __future__ import annotations

import datetime as dt
import gzip
import json

import pytest

from paths import DATA
from whichgpu.catalog.prices.api_store import ApiPriceStore
from whichgpu.catalog.prices.store import PriceStore
from whichgpu.cost import api_prices
from whichgpu.cost.api_prices_refresh import DEFAULT_URL, UPSTREAM, convert, refresh

RECORDED = DATA / "api_prices" / "genai_prices_47df840a_v2_data.json.gz"
DAY = dt.date(2026, 12, 7)


@pytest.fixture(scope="module")
def upstream() -> str:
    return gzip.decompress(RECORDED.read_bytes()).decode("utf-8")


def _replay(text: str):
    def download(url: str) -> bytes:
        assert url == DEFAULT_URL  # the file genai-prices' own updater fetches
        return text.encode("utf-8")
    return download


# ``store``: the shared fixture, one SQLite file and one PostgreSQL store (tests/store_backends)


def _key(p):
    return (p.provider, p.provider_model)


def test_refresh_at_the_shipped_commit_gives_back_every_shipped_genai_price(upstream):
    got = convert(upstream, origin="data.json", day=DAY)
    shipped = {_key(p): p for p in api_prices.shipped() if p.source.startswith(UPSTREAM)}
    assert got.found == got.mapped == len(shipped) and not got.missing
    fresh = {_key(p): p for p in got.rows if p.source.startswith(UPSTREAM)}
    for key, old in shipped.items():
        new = fresh[key]
        assert (new.input_per_mtok, new.cached_input_per_mtok, new.output_per_mtok) == (
            old.input_per_mtok, old.cached_input_per_mtok, old.output_per_mtok), key
        assert new.model == old.model and new.date == DAY.isoformat()
    others = [p for p in got.rows if not p.source.startswith(UPSTREAM)]
    assert others == [p for p in api_prices.shipped() if not p.source.startswith(UPSTREAM)]


def test_a_time_of_day_discount_is_not_taken_for_the_price(upstream):
    data = json.loads(upstream)
    deepseek = next(p for p in data if p["id"] == "deepseek")
    chat = next(m for m in deepseek["models"] if m["id"] == "deepseek-chat")
    windows = [e for e in chat["prices"] if "start_time" in (e.get("constraint") or {})]
    assert windows  # the recorded file has an off-peak window for it
    from whichgpu.cost.api_prices_refresh import _current

    chosen = _current(chat["prices"], DAY)
    assert chosen is not None and all(chosen is not w["prices"] for w in windows)


def test_a_refresh_is_stored_as_a_dated_snapshot_that_answers_then_use(upstream, store):
    done = refresh(store, download=_replay(upstream), today=DAY)
    assert done.ok and done.snapshot.row_count == len(done.converted.rows)
    tab = api_prices.table(store=store)
    assert tab.origin == "store" and tab.source == DEFAULT_URL
    assert tab.snapshot == done.snapshot.id and tab.fetched_at
    assert tab.to_json()["newest_date"] == DAY.isoformat()
    assert [p.to_json() for p in tab.rows] == [p.to_json() for p in done.converted.rows]


@pytest.mark.parametrize("bad", [
    "not json at all",
    json.dumps({"providers": []}),
    "CUT",  # the recorded file cut to its first five providers
])
def test_a_failed_refresh_records_why_and_keeps_the_stored_prices(upstream, store, bad):
    first = refresh(store, download=_replay(upstream), today=DAY)
    before = api_prices.table(store=store)
    text = json.dumps(json.loads(upstream)[:5]) if bad == "CUT" else bad
    failed = refresh(store, download=_replay(text), today=DAY)
    assert not failed.ok and failed.snapshot.status == "failed" and failed.snapshot.message
    after = api_prices.table(store=store)
    assert after.snapshot == first.snapshot.id
    assert [p.to_json() for p in after.rows] == [p.to_json() for p in before.rows]
    assert [s.status for s in ApiPriceStore(store).snapshots()] == ["failed", "ok"]


def test_no_network_is_a_recorded_failure_not_a_crash(store):
    def down(url: str) -> bytes:
        raise OSError("connection refused")

    failed = refresh(store, download=down)
    assert not failed.ok and "connection refused" in failed.snapshot.message
    assert api_prices.table(store=store).origin == "shipped"  # nothing stored before


def test_an_empty_store_answers_with_the_shipped_table_and_says_so(store):
    tab = api_prices.table(store=store)
    assert tab.origin == "shipped" and tab.rows == api_prices.shipped()
    assert "47df840a" in tab.source


def test_vs_api_says_where_its_prices_come_from(upstream, tmp_path, monkeypatch):
    from whichgpu.answers.advice import recommend
    from whichgpu.answers.requests import Recommend

    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(tmp_path / "prices.sqlite"))
    q = Recommend(model="llama-3.3-70b", quant="fp8", requests_per_s="2", vs_api=True,
                  prompt_tokens="1000", output_tokens="200")
    shipped = recommend(q).vs_api.to_json()["prices_from"]
    assert shipped["origin"] == "shipped"
    refresh(PriceStore(tmp_path / "prices.sqlite"), download=_replay(upstream), today=DAY)
    data = recommend(q).vs_api.to_json()
    assert data["prices_from"]["origin"] == "store"
    assert data["prices_from"]["source"] == DEFAULT_URL
    assert {r["date"] for r in data["api"] if r["source"].startswith(UPSTREAM)} == {
        DAY.isoformat()}


def test_cli_prices_api_refresh_from_a_local_copy(cli, tmp_path, upstream, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.json").write_text(upstream, "utf-8")
    store_file = str(tmp_path / "p.sqlite")
    r = cli("prices", "api", "llama-3.3-70b", "--refresh", "--source", "data.json",
            "--store", store_file, "--json")
    assert r.code == 0, r
    data = json.loads(r.out)
    assert data["refresh"]["ok"] and data["prices_from"]["origin"] == "store"
    assert {p["model"] for p in data["prices"]} == {"llama-3.3-70b"}
    monkeypatch.setenv("WHICHGPU_OFFLINE", "1")
    offline = cli("prices", "api", "--refresh", "--store", store_file)
    assert offline.code == 1 and "stored prices are kept" in offline.err, offline
    again = cli("prices", "api", "--store", store_file, "--json")
    assert json.loads(again.out)["prices_from"]["origin"] == "store"
    bad = cli("prices", "api", "--source", "data.json", "--store", store_file)
    assert bad.code == 2, bad


def test_rest_reads_the_table_and_refreshing_needs_the_write_token(web, monkeypatch):
    r = web.get("/api/v1/prices/api", params={"model": "llama-3.3-70b"})
    assert r.status_code == 200
    data = r.json()
    assert data["prices_from"]["origin"] == "shipped" and data["prices"]
    assert web.post("/api/v1/prices/api/refresh").status_code in (401, 403)


def test_the_advisor_page_says_how_old_its_api_prices_are(web, upstream, tmp_path, monkeypatch):
    params = {"model": "llama-3.3-70b", "quant": "fp8", "requests_per_s": "2", "vs_api": "true",
              "prompt_tokens": "1000", "output_tokens": "200"}
    page = web.get("/", params=params)
    assert page.status_code == 200 and 'data-origin="shipped"' in page.text
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(tmp_path / "p.sqlite"))
    refresh(PriceStore(tmp_path / "p.sqlite"), download=_replay(upstream), today=DAY)
    fr = web.get("/", params={**params, "lang": "fr", "top": "9"})  # a new question
    assert 'data-origin="store"' in fr.text and "Prix des API actualisés" in fr.text
