"""Issue 36, items 3 and 5: no 500 from any input, and a store outage on a page is a 503 in
the page's words.

* ``Infinity`` or ``1e999`` in a JSON body (``batch``, ``count``, ``years``,
  ``hours_per_month``) made the 422 handler fail to encode the infinity: a 500 and a 60-line
  traceback. Now a 422 in strict JSON.
* A 309+-digit integer in a page's query overflowed the number formatter (``math.isfinite``
  of an int too large for a float): a 500 page. Now the page says the limit and the number by
  its digits, in English and French.
* With the PostgreSQL store down, the ``/prices`` page answered 422 "Please check the input"
  with the database user, host, port and name and libpq's raw text, and /metrics counted a
  client error. Now a 503 in the page's language, without the location, counted as a server
  error.
"""

from __future__ import annotations

import json
import re
import socket

import pytest

HUGE = "9" * 400


@pytest.mark.parametrize("path, field", [
    ("/api/v1/memory", "batch"), ("/api/v1/speed", "batch"), ("/api/v1/recommend", "batch"),
    ("/api/v1/recommend", "count"), ("/api/v1/tco", "years"),
    ("/api/v1/tco", "hours_per_month"), ("/api/v1/checklist", "hours_per_month")])
@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "1e999"])
def test_an_infinity_in_a_json_body_is_a_422_in_strict_json(web, path, field, literal):
    base = {"/api/v1/tco": '"gpu": "h100-sxm"', "/api/v1/speed": '"model": "7B", "gpu": "h100"',
            "/api/v1/checklist": '"workload": "inference", "model": "7B", "budget_per_hour": '
                                 '"2USD", "horizon_months": 12'}.get(
                path, '"model": "7B"')
    raw = f'{{{base}, "{field}": {literal}}}'
    r = web.post(path, content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422, (raw, r.status_code, r.text[:300])
    data = json.loads(r.text, parse_constant=lambda c: pytest.fail(f"{c} in the answer"))
    assert data["detail"] and "\n" not in data["detail"], data
    assert "internal error" not in data["detail"]


@pytest.mark.parametrize("page", [
    f"/memory?model=7B&batch={HUGE}", f"/memory?model=7B&gpus={HUGE}",
    f"/memory?model=7B&task=lora&lora_rank={HUGE}", f"/cost?gpu=h100&count={HUGE}",
    f"/?model=7B&count={HUGE}", f"/prices?gpu=h100&limit={HUGE}",
    f"/rent-or-buy?gpu=h100&hours_per_month={HUGE}"])
def test_a_400_digit_integer_on_a_page_is_said_not_a_500(web, page):
    for lang, digits in (("en", "(400 digits)"), ("fr", "(400 chiffres)")):
        r = web.get(f"{page}&lang={lang}", headers={"accept": "text/html"})
        assert r.status_code == 422, (page, lang, r.status_code)
        assert "internal error" not in r.text
        if "hours_per_month" not in page:  # a float field says its own words
            assert f"999…999 {digits}" in r.text, (page, lang)


@pytest.fixture
def store_down(monkeypatch):
    """A PostgreSQL store whose server is not running (nothing listens on its port)."""
    pytest.importorskip("psycopg")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    monkeypatch.setenv("WHICHGPU_DATABASE_URL",
                       f"postgresql://teamuser:S3cr3tPa55@127.0.0.1:{port}/teamprices")
    yield port
    from whichgpu.catalog.prices.backends.postgres import _VERDICT, close_pools

    close_pools()
    _VERDICT.clear()


def _alert(html: str) -> str:
    m = re.search(r'role="alert"><p>(.*?)</p>', html, re.S)
    return re.sub(r"<[^>]+>", "", m.group(1)) if m else ""


def _errors(web, kind: str) -> float:
    m = re.search(rf'whichgpu_http_request_errors_total\{{kind="{kind}",method="GET",'
                  rf'route="/prices"\}} ([0-9.]+)', web.get("/metrics").text)
    return float(m.group(1)) if m else 0.0


def test_a_store_outage_on_the_prices_page_is_a_503_in_the_pages_words(web, store_down):
    server_before, client_before = _errors(web, "server"), _errors(web, "client")
    said = {}
    for lang in ("en", "fr"):
        r = web.get(f"/prices?gpu=a100&lang={lang}", headers={"accept": "text/html"})
        assert r.status_code == 503, (lang, r.status_code)
        said[lang] = _alert(r.text)
        for secret in (str(store_down), "127.0.0.1", "teamuser", "teamprices", "S3cr3tPa55",
                       "postgresql", "connection", "Please check the input"):
            assert secret not in r.text, (lang, secret)
    assert "price store cannot be used right now" in said["en"]
    assert "base de prix du serveur est inutilisable" in said["fr"]
    # an alert on server errors sees the outage (it was counted as the visitor's error)
    assert _errors(web, "server") == server_before + 2
    assert _errors(web, "client") == client_before


def test_the_api_still_says_a_store_outage_with_its_reason_and_no_location(web, store_down):
    r = web.get("/api/v1/prices/history", params={"gpu": "a100"})
    assert r.status_code == 503
    assert "cannot connect" in r.json()["detail"]
    assert str(store_down) not in r.text and "teamuser" not in r.text
