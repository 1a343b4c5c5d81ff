"""Security review 2026-12, re-checked on the current code: what still reproduced.

Defect 9: ``OPTIONS`` (or any unserved method) on a path served by a GET route and a POST
route (``/api/v1/memory``, ``speed``, ``recommend``, ``checklist``, ``tco``, the pages that
take a pasted config) answered 405 with ``Allow: GET``: the first matching route's methods,
although POST is served on the same path (schemathesis ST205). Now ``Allow`` lists every
method some route serves there.

The review's other defects are guarded by the files named in the report (e.g.
tests/catalog/prices/test_store_url_secrets.py, tests/catalog/prices/test_store_damaged_rows.py,
tests/web/test_web_no_500_and_store_outage.py, tests/web/test_web_memo_accounting.py,
tests/models/test_hub_breaker.py, tests/cli/test_cli_one_line_refusals.py).
"""

from __future__ import annotations

import pytest


def _allow(response) -> set[str]:
    return {m.strip() for m in response.headers.get("allow", "").split(",") if m.strip()}


@pytest.mark.parametrize("path", ["/api/v1/memory", "/api/v1/speed", "/api/v1/recommend",
                                  "/api/v1/checklist", "/api/v1/tco", "/memory", "/"])
@pytest.mark.parametrize("method", ["OPTIONS", "DELETE", "PUT"])
def test_a_405_lists_post_beside_get_where_both_are_served(web, path, method):
    r = web.request(method, path)
    assert r.status_code == 405, (path, method, r.status_code)
    assert _allow(r) == {"GET", "POST"}, (path, method, r.headers.get("allow"))


def test_a_405_on_a_get_only_path_lists_get_alone(web):
    r = web.request("POST", "/api/v1/gpus", json={})
    assert r.status_code == 405
    assert _allow(r) == {"GET"}
    assert r.json() == {"detail": "Method Not Allowed"}
