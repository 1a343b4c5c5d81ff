"""The price writes over REST (issue 34's token-guarded import) take fuzzed bodies, with
infinities, 400-digit integers, denormals and NaN in every column, without a server error
(issue 36), and a refused import stores nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whichgpu.catalog.prices import PriceStore
from whichgpu.web.writes import TOKEN_ENV, TOKEN_FILE_ENV

TOKEN = "fuzz-token-for-tests-0123456789"
COLUMNS = ["provider", "gpu", "gpu_count", "price_per_hour", "currency", "billing_increment_s",
           "billing_minimum_s", "spot", "region", "observed_at", "source", "note"]
GOOD = ["acme", "h100-sxm", "1", "2.50", "USD", "1", "0", "false", "eu", "2026-11-01",
        "our quote", ""]
ODD = st.sampled_from(["Infinity", "-Infinity", "NaN", "1e999", "1e-320", "9" * 400,
                       "-" + "9" * 400, "", "0", "-1", "h100", "\x00", "2.5e-300"])


def _snapshots() -> list[tuple[int, str, int]]:
    return [(s.id, s.feed, s.offer_count) for s in PriceStore(None).snapshots()]


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.delenv(TOKEN_FILE_ENV, raising=False)
    return TOKEN


def _check(r, where: str) -> None:
    assert r.status_code in (200, 400, 413, 415, 422), (where, r.status_code, r.text[:300])
    data = json.loads(r.text, parse_constant=lambda c: pytest.fail(f"{c} in {where}"))
    if r.status_code != 200:
        assert isinstance(data["detail"], str) and "\n" not in data["detail"], (where, data)


def test_fuzzed_csv_imports_never_get_a_server_error_and_a_refusal_stores_nothing(web, token):
    web.get("/api/v1/prices")  # seeds the store

    @settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(column=st.integers(0, len(COLUMNS) - 1), value=ODD)
    def run(column: int, value: str) -> None:
        row = list(GOOD)
        row[column] = value
        body = ",".join(COLUMNS) + "\n" + ",".join(row) + "\n"
        before = _snapshots()
        r = web.post("/api/v1/prices/import?name=fuzz", content=body,
                     headers={"content-type": "text/csv", "Authorization": f"Bearer {TOKEN}"})
        _check(r, f"{COLUMNS[column]}={value!r}")
        if r.status_code != 200:
            assert _snapshots() == before

    run()


def test_fuzzed_json_imports_never_get_a_server_error(web, token):
    web.get("/api/v1/prices")

    @settings(max_examples=30, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(column=st.sampled_from(["gpu_count", "price_per_hour", "billing_increment_s"]),
           value=st.sampled_from([float("inf"), float("-inf"), float("nan"), 10**400,
                                  -(10**400), 1e-320]))
    def run(column: str, value: float | int) -> None:
        offer = dict(zip(COLUMNS, GOOD, strict=True))
        offer[column] = value
        raw = json.dumps([offer], allow_nan=True)
        r = web.post("/api/v1/prices/import?name=fuzzj", content=raw,
                     headers={"content-type": "application/json",
                              "Authorization": f"Bearer {TOKEN}"})
        _check(r, f"{column}={value!r}")

    run()


def test_the_json_fuzz_reaches_the_parser_a_good_json_import_is_stored(web, token):
    """Guards the fuzz above: a plain JSON body of the same shape is taken (else the fuzz
    would only ever meet a refusal of the format)."""
    web.get("/api/v1/prices")
    raw = json.dumps([dict(zip(COLUMNS, GOOD, strict=True))])
    r = web.post("/api/v1/prices/import?name=fuzzok", content=raw,
                 headers={"content-type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
