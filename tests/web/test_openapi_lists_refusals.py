"""The served app refuses an over-long query string (414) or body (413) before routing, on
every path; the OpenAPI document must list both on every operation, or a client reading it
(and the schema fuzzer, tests/web/test_web_schema.py) meets a status it was not told about."""

from __future__ import annotations

from whichgpu.web.app import create_app


def test_every_operation_lists_the_refusals_made_before_routing():
    spec = create_app().openapi()
    missing = [f"{method.upper()} {path}: {code}"
               for path, item in spec["paths"].items()
               for method, op in item.items()
               for code in ("413", "414") if code not in op.get("responses", {})]
    assert not missing, missing


def test_a_long_query_on_a_write_is_refused_with_a_listed_status():
    from starlette.testclient import TestClient

    client = TestClient(create_app())
    r = client.post("/api/v1/runs?source=" + "%F0%9F%98%80" * 400, content=b"{}")
    assert r.status_code == 414
    ops = create_app().openapi()["paths"]["/api/v1/runs"]["post"]["responses"]
    assert "414" in ops
