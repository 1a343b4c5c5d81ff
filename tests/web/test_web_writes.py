"""Who may write: reads stay open; the price store's writes over REST (refresh, import) need
the operator's token, and a refused write leaves the store as it was."""

from __future__ import annotations

import logging

import pytest

from whichgpu.catalog.prices import PriceStore
from whichgpu.web.writes import MIN_TOKEN_CHARS, NO_TOKEN, TOKEN_ENV, TOKEN_FILE_ENV

TOKEN = "s3cret-token-for-tests-0123456789"
CSV = ("provider,gpu,gpu_count,price_per_hour,currency,billing_increment_s,billing_minimum_s,"
       "spot,region,observed_at,source,note\n"
       "acme,h100-sxm,1,2.50,USD,1,0,false,eu,2026-11-01,our quote,\n")
IMPORT = "/api/v1/prices/import?name=acme-quotes"


def snapshots() -> list[tuple[int, str, int]]:
    return [(s.id, s.feed, s.offer_count) for s in PriceStore(None).snapshots()]


def post_csv(web, headers=None):
    return web.post(IMPORT, content=CSV, headers={"content-type": "text/csv", **(headers or {})})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.delenv(TOKEN_FILE_ENV, raising=False)
    return TOKEN


def test_without_a_configured_token_every_write_is_refused(web, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.delenv(TOKEN_FILE_ENV, raising=False)
    web.get("/api/v1/prices")  # the store is seeded by the first read
    before = snapshots()
    for r in (post_csv(web), post_csv(web, bearer(TOKEN)),
              web.post("/api/v1/prices/refresh", headers=bearer(TOKEN))):
        assert r.status_code == 403, r.text
        assert r.json()["detail"] == NO_TOKEN
    assert snapshots() == before
    assert web.get("/api/v1/health").json()["writes"] == "off"
    assert web.get("/api/v1/prices").status_code == 200  # reads stay open


def test_a_write_without_the_token_is_401_and_with_a_wrong_one_403(web, token):
    web.get("/api/v1/prices")
    before = snapshots()
    missing = post_csv(web)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    wrong = post_csv(web, bearer(TOKEN[:-1] + "x"))
    assert wrong.status_code == 403
    basic = post_csv(web, {"Authorization": "Basic " + TOKEN})
    assert basic.status_code == 401
    refresh = web.post("/api/v1/prices/refresh")
    assert refresh.status_code == 401
    assert snapshots() == before  # nothing stored by any refused write
    for r in (missing, wrong, basic, refresh):
        assert TOKEN not in r.text


def test_with_the_token_an_import_is_stored_and_served(web, token):
    web.get("/api/v1/prices")
    before = snapshots()
    r = post_csv(web, bearer(TOKEN))
    assert r.status_code == 200, r.text
    assert r.json()["feed"] == "acme-quotes" and "store" not in r.json()
    after = snapshots()
    assert len(after) == len(before) + 1
    assert [s[1:] for s in after if s not in before] == [("acme-quotes", 1)]
    offers = web.get("/api/v1/prices", params={"prices": "acme-quotes"}).json()["offers"]
    assert [(o["provider"], o["gpu"], o["price_per_hour"]["amount"]) for o in offers] == [
        ("acme", "h100-sxm", 2.5)]
    assert web.get("/api/v1/health").json()["writes"] == "token"


def test_a_bad_file_is_refused_with_its_row_and_stores_nothing(web, token):
    web.get("/api/v1/prices")
    before = snapshots()
    bad = CSV.replace("2.50", "-3")
    r = web.post(IMPORT, content=bad, headers={"content-type": "text/csv", **bearer(TOKEN)})
    assert r.status_code == 422, r.text
    assert "/tmp" not in r.json()["detail"] and "whichgpu-import" not in r.json()["detail"]
    r = web.post(IMPORT, content=CSV, headers={"content-type": "image/png", **bearer(TOKEN)})
    assert r.status_code == 422 and "text/csv" in r.json()["detail"]
    assert snapshots() == before


def test_the_token_file_is_read_at_each_write(web, tmp_path, monkeypatch):
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n")
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.setenv(TOKEN_FILE_ENV, str(secret))
    assert post_csv(web, bearer(TOKEN)).status_code == 200
    secret.write_text("rotated-" + TOKEN)
    assert post_csv(web, bearer(TOKEN)).status_code == 403
    assert post_csv(web, bearer("rotated-" + TOKEN)).status_code == 200
    secret.unlink()  # an unreadable secret turns writes off, it never opens them
    r = post_csv(web, bearer("rotated-" + TOKEN))
    assert r.status_code == 403 and r.json()["detail"] == NO_TOKEN


def test_a_short_token_turns_writes_off(web, monkeypatch):
    short = "x" * (MIN_TOKEN_CHARS - 1)
    monkeypatch.setenv(TOKEN_ENV, short)
    r = post_csv(web, bearer(short))
    assert r.status_code == 403 and r.json()["detail"] == NO_TOKEN


def test_a_refresh_with_the_token_runs_and_names_no_server_path(web, token):
    r = web.post("/api/v1/prices/refresh", headers=bearer(TOKEN))
    assert r.status_code == 200, r.text
    data = r.json()
    assert "store" not in data and "ok" in data


def test_the_token_is_never_logged(web, token, caplog):
    caplog.set_level(logging.DEBUG)
    post_csv(web, bearer(TOKEN))
    post_csv(web, bearer("wrong-" + TOKEN))
    assert TOKEN not in caplog.text


@pytest.mark.parametrize(("lang", "configured", "words"), [
    ("en", False, "Its REST API takes no writes"),
    ("en", True, "needs the operator’s write token"),
    ("fr", False, "n’accepte aucune écriture"),
    ("fr", True, "demande le jeton d’écriture"),
])
def test_the_prices_page_says_who_may_write(web, monkeypatch, lang, configured, words):
    if configured:
        monkeypatch.setenv(TOKEN_ENV, TOKEN)
    else:
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.delenv(TOKEN_FILE_ENV, raising=False)
    page = web.get("/prices", params={"lang": lang})
    assert page.status_code == 200
    assert words in page.text.replace("&#39;", "'")
    assert TOKEN not in page.text
