"""The served app refuses an over-long query string (414) or body (413) before routing, on
every path; the OpenAPI document must list both on every operation, or a client reading it
(and the schema fuzzer, tests/web/test_web_schema.py) meets a status it was not told about.

Both read the shared app's document (the ``web`` fixture): FastAPI builds it once per app, and
building it took about 0.4 CPU-s each time a new app was asked (tests/cpu_times.py, 2026-12-07).
"""

from __future__ import annotations


def test_every_operation_lists_the_refusals_made_before_routing(web):
    spec = web.app.openapi()
    missing = [f"{method.upper()} {path}: {code}"
               for path, item in spec["paths"].items()
               for method, op in item.items()
               for code in ("413", "414") if code not in op.get("responses", {})]
    assert not missing, missing


def test_a_long_query_on_a_write_is_refused_with_a_listed_status(web):
    r = web.post("/api/v1/runs?source=" + "%F0%9F%98%80" * 400, content=b"{}")
    assert r.status_code == 414
    ops = web.app.openapi()["paths"]["/api/v1/runs"]["post"]["responses"]
    assert "414" in ops
