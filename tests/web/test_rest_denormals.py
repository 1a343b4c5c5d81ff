"""A denormal float (1e-320) passes a ``gt=0`` bound but means no quantity: the REST API
refuses it with a 422 naming the field, as the CLI does (issue 36, item 7)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from whichgpu.web.app import create_app


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize("field", ["hours_per_month", "years", "load_factor", "tdp"])
def test_a_denormal_in_a_json_body_is_refused_by_name(client: TestClient, field: str) -> None:
    r = client.post("/api/v1/tco", json={"gpu": "h100-sxm", field: 1e-320})
    assert r.status_code == 422
    body = r.json()
    assert body["message"]["id"] == "bound.denormal"
    assert field.replace("_", " ") in body["detail"] or field in body["detail"]


def test_a_denormal_in_a_query_is_refused_and_a_plausible_value_answers(client: TestClient):
    bad = client.get("/api/v1/tco", params={"gpu": "h100-sxm", "hours_per_month": "1e-320"})
    assert bad.status_code == 422 and "too small" in bad.json()["detail"]
    good = client.get("/api/v1/tco", params={"gpu": "h100-sxm", "hours_per_month": "300"})
    assert good.status_code == 200


def test_the_french_page_words_say_it_in_french(client: TestClient) -> None:
    r = client.get("/rent-or-buy", params={"gpu": "h100-sxm", "hours_per_month": "1e-320",
                                          "lang": "fr"})
    assert r.status_code in (200, 422)
    assert "trop petit pour calculer" in r.text
