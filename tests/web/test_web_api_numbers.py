"""Issue 17, item 6: the REST API takes a JSON number wherever the command line takes ``8192``
or ``8k`` (the same answer as the text), and a body that is not JSON, or not an object, gets a
422 that says so (was: "context: Input should be a valid string", "38: JSON decode error")."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.fixture
def client(web: TestClient) -> TestClient:
    """The shared app's client (tests/conftest.py ``web``): the two /openapi.json tests read
    the document it built once, where a new app per test built it again (about 0.5 CPU-s each,
    tests/cpu_times.py, 2026-12-07)."""
    return web


@pytest.mark.parametrize(("path", "number", "text"), [
    ("/api/v1/memory", {"model": "llama-3.1-8b", "context": 8192},
     {"model": "llama-3.1-8b", "context": "8k"}),
    ("/api/v1/memory", {"model": "llama-3.1-8b", "context": 32768, "batch": 4},
     {"model": "llama-3.1-8b", "context": "32768", "batch": 4}),
    ("/api/v1/recommend", {"model": "llama-3.1-8b", "tokens": 1e6, "only": "h100-sxm"},
     {"model": "llama-3.1-8b", "tokens": "1M", "only": "h100-sxm"}),
    ("/api/v1/recommend", {"model": "flux.1-dev", "task": "image", "images": 1000,
                           "quant": "fp8", "only": "rtx-4090"},
     {"model": "flux.1-dev", "task": "image", "images": "1000", "quant": "fp8",
      "only": "rtx-4090"}),
    ("/api/v1/speed", {"model": "llama-3.1-8b", "gpu": "h100-sxm", "context": 4096},
     {"model": "llama-3.1-8b", "gpu": "h100-sxm", "context": "4k"}),
])
def test_a_json_number_answers_as_its_text(client, path, number, text):
    a, b = client.post(path, json=number), client.post(path, json=text)
    assert a.status_code == 200, a.text
    assert a.json() == b.json()


def test_a_json_number_keeps_the_fields_bounds(client):
    res = client.post("/api/v1/memory", json={"model": "llama-3.1-8b", "context": -5})
    assert res.status_code == 422
    assert "context" in res.json()["detail"]


def test_booleans_are_not_read_as_numbers(client):
    res = client.post("/api/v1/memory", json={"model": "llama-3.1-8b", "context": True})
    assert res.status_code == 422


def test_malformed_json_says_where_and_what_to_send(client):
    res = client.post("/api/v1/memory", content=b'{"model": "llama-3.1-8b", "context": 8k}',
                      headers={"content-type": "application/json"})
    assert res.status_code == 422
    detail = res.json()["detail"]
    assert detail.startswith("the request body is not valid JSON: ")
    assert "at character 38" in detail and '"context": 8192' in detail


def test_a_body_that_is_not_an_object_says_so(client):
    res = client.post("/api/v1/recommend", json=[1, 2])
    assert res.status_code == 422
    assert res.json()["detail"].startswith("the request body must be one JSON object")


def _body_schemas(client) -> dict:
    spec = client.get("/openapi.json").json()
    return {k: v for k, v in spec["components"]["schemas"].items() if k.endswith("Body")}


def _types(prop: dict) -> set[str]:
    return {b.get("type") for b in prop.get("anyOf", [prop])}


def test_openapi_declares_number_or_text_where_a_json_number_is_taken(client):
    """Each body field a JSON number is accepted for says number-or-string in /openapi.json
    (was: string only, so generated clients refused to send ``"context": 8192``)."""
    from whichgpu.answers.request import NUMBER_TEXT_FIELDS

    schemas = _body_schemas(client)
    seen = set()
    for name, schema in schemas.items():
        for field, prop in schema["properties"].items():
            if field in NUMBER_TEXT_FIELDS and "string" in _types(prop):
                seen.add(field)
                assert {"number", "string"} <= _types(prop), (name, field, prop)
    assert {"context", "tokens", "images", "requests_per_s", "utilization"} <= seen
    assert {"context"} <= set(schemas["MemoryBody"]["properties"])


def test_openapi_keeps_unit_fields_text_only(client):
    """Money and durations need their unit ("2USD", "2h"): a bare number is refused, and the
    schema does not offer one."""
    props = _body_schemas(client)["RecommendBody"]["properties"]
    for field in ("budget", "deadline", "ttft", "model"):
        assert "number" not in _types(props[field]), (field, props[field])


@pytest.mark.parametrize(("path", "field", "value", "base"), [
    ("/api/v1/memory", "context", 8192, {"model": "llama-3.1-8b"}),
    ("/api/v1/recommend", "requests_per_s", 2, {"model": "llama-3.1-8b", "only": "h100-sxm"}),
    ("/api/v1/tco", "utilization", 0.5, {"gpu": "rtx-4090", "purchase_price": "1800USD",
                                         "rent_price": "0.4USD"}),
])
def test_what_the_schema_offers_as_a_number_is_answered(client, path, field, value, base):
    res = client.post(path, json={**base, field: value})
    assert res.status_code == 200, res.text
