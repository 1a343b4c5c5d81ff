"""What operators rely on: /healthz, /readyz, /metrics and the access log, on both store engines."""

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from prices_support import GPUHUNT_DIR
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.market import market_feed_names
from whichgpu.catalog.prices.selection import ensure_shipped


@pytest.fixture
def client_for(monkeypatch):
    """``client_for(url, **env)``: the web app on that store, with that environment."""
    from whichgpu.web import services
    from whichgpu.web.app import create_app

    clients = []

    def make(url: str | None = None, **env: str) -> TestClient:
        if url is not None:
            monkeypatch.setenv("WHICHGPU_DATABASE_URL", url)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        services.clear_cache()
        client = TestClient(create_app(), raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.__exit__(None, None, None)
    services.clear_cache()


def samples(text: str) -> dict[tuple, float]:
    """{(name, sorted labels): value} of a /metrics page."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_healthz_answers_without_the_store_and_readyz_says_why_it_is_not_ready(client_for):
    c = client_for("postgresql://app:s3cret@127.0.0.1:1/w")  # nothing listens there
    health = c.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    ready = c.get("/readyz")
    assert ready.status_code == 503
    body = ready.json()
    assert body["ready"] is False and body["store"]["reachable"] is False
    assert "cannot connect to the PostgreSQL server" in body["store"]["reason"]
    assert "s3cret" not in ready.text and "127.0.0.1" not in ready.text
    assert "per process" in body["caches"]["scope"] or "this worker" in body["caches"]["scope"]


def test_readyz_reports_the_market_prices_and_their_age_on_both_engines(client_for, store_url):
    store = PriceStore(store_url)
    c = client_for(store_url)
    empty = c.get("/readyz")
    assert empty.status_code == 503 and "no market prices" in empty.json()["reason"]
    ensure_shipped(store)  # what 'whichgpu serve' does before its workers start
    r = c.get("/readyz")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ready"] is True and body["store"]["engine"] == store.dialect
    from whichgpu.catalog.prices.schema import MIGRATIONS

    assert body["store"]["schema_version"] == len(MIGRATIONS)
    by_feed = {f["feed"]: f for f in body["prices"]["by_feed"]}
    assert set(by_feed) == set(market_feed_names())
    assert body["prices"]["offers"] == sum(s.offer_count for s in store.current()
                                           if s.feed in by_feed)
    now = datetime.now(UTC)
    for s in store.current():
        if s.feed in by_feed:
            assert abs(by_feed[s.feed]["age_s"] - (now - s.observed_at).total_seconds()) < 60
    assert body["caches"]["price_selections_recheck_s"] == 10
    assert str(store.location) not in r.text  # a visitor learns nothing of where it is


def test_metrics_count_requests_by_route_template_with_latency_and_errors(client_for):
    c = client_for()
    before = samples(c.get("/metrics").text)
    for gpu in ("rtx-4090", "h100-sxm", "a100-80gb-sxm", "no-such-gpu"):
        c.get(f"/api/v1/gpus/{gpu}")
    c.get("/not/a/page/at/all")
    c.post("/api/v1/memory", content=b"{" + b" " * 200_000 + b"}",
           headers={"content-type": "application/json"})  # refused before routing: 413
    after = samples(c.get("/metrics").text)

    def grew(name, **labels):
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    route = "/api/v1/gpus/{gpu_id}"
    assert grew("whichgpu_http_requests_total", method="GET", route=route, status="200") == 3
    assert grew("whichgpu_http_requests_total", method="GET", route=route, status="422") == 1
    assert grew("whichgpu_http_request_duration_seconds_count", method="GET", route=route) == 4
    assert grew("whichgpu_http_request_errors_total", method="GET", route=route,
                kind="client") == 1
    assert grew("whichgpu_http_requests_total", method="GET", route="unmatched",
                status="404") == 1
    assert grew("whichgpu_http_requests_total", method="POST", route="/api/v1/memory",
                status="413") == 1
    routes = {dict(k[1]).get("route") for k in after if k[0] == "whichgpu_http_requests_total"}
    assert not any("rtx-4090" in (r or "") or "no-such-gpu" in (r or "") for r in routes)
    buckets = [k for k in after if k[0] == "whichgpu_http_request_duration_seconds_bucket"
               and dict(k[1]).get("route") == route]
    assert len(buckets) >= 10  # a histogram, not just an average


def test_metrics_show_price_age_and_a_refresh_run_by_another_process(client_for, store_url,
                                                                     tmp_path):
    """The refresh job is another process (another machine, with PostgreSQL): its outcome is
    read from the store when Prometheus scrapes, whichever worker answers."""
    store = PriceStore(store_url)
    ensure_shipped(store)
    c = client_for(store_url)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "runpod.csv").write_text("instance_name,location\nNVIDIA H100 PCIe,US\n")
    env = {"WHICHGPU_DATABASE_URL": store_url, "WHICHGPU_HOME": str(tmp_path / "job-home"),
           "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    for catalog in (GPUHUNT_DIR, broken):  # one good refresh, then one that fails
        job = subprocess.run(
            [sys.executable, "-c", "from whichgpu.cli import main; main()", "prices",
             "refresh", "--source", "gpuhunt/runpod", "--json"],
            capture_output=True, text=True, timeout=120,
            env={**env, "GPUHUNT_CATALOG_DIR": str(catalog)})
        assert job.returncode in (0, 1), job.stderr
    m = samples(c.get("/metrics").text)
    assert m[("whichgpu_price_store_up", ())] == 1
    assert m[("whichgpu_price_last_fetch_ok", (("feed", "gpuhunt/runpod"),))] == 0
    assert m[("whichgpu_price_fetches", (("feed", "gpuhunt/runpod"), ("status", "failed")))] == 1
    assert m[("whichgpu_price_fetches", (("feed", "gpuhunt/runpod"), ("status", "ok")))] == 1
    now = datetime.now(UTC).timestamp()
    for s in store.current():
        labels = (("feed", s.feed), ("kind", s.kind), ("source", s.source))
        if s.kind == "history":
            assert ("whichgpu_price_offers", labels) not in m  # a trend, not a price
            continue
        assert m[("whichgpu_price_offers", labels)] == s.offer_count
        if s.observed_at is not None:
            assert abs(m[("whichgpu_price_age_seconds", labels)]
                       - (now - s.observed_at.timestamp())) < 60
    assert ("whichgpu_price_age_seconds", (("feed", "article-000"), ("kind", "shipped"),
                                           ("source", "shipped"))) not in m  # undated


def test_metrics_say_when_the_store_cannot_be_read(client_for):
    c = client_for("postgresql://app:s3cret@127.0.0.1:1/w")
    r = c.get("/metrics")
    assert r.status_code == 200 and "s3cret" not in r.text
    assert samples(r.text)[("whichgpu_price_store_up", ())] == 0


def test_the_access_log_is_one_json_line_per_request_without_the_query(client_for, capsys):
    c = client_for(WHICHGPU_ACCESS_LOG="1")
    capsys.readouterr()
    r = c.get("/api/v1/gpus/rtx-4090?secret-question=abc123",
              headers={"x-request-id": "req-42", "user-agent": "probe/1"})
    bad = c.get("/api/v1/gpus/rtx-4090", headers={"x-request-id": "not ok; " * 20})
    lines = [x for x in map(json.loads, capsys.readouterr().err.splitlines())
             if x["event"] == "request"]
    assert len(lines) == 2
    first, second = lines
    assert r.headers["x-request-id"] == "req-42" == first["request_id"]
    assert first["route"] == "/api/v1/gpus/{gpu_id}" and first["path"] == "/api/v1/gpus/rtx-4090"
    assert first["status"] == 200 and first["method"] == "GET" and first["bytes"] > 100
    assert first["duration_ms"] > 0 and first["user_agent"] == "probe/1" and first["pid"]
    assert "abc123" not in json.dumps(lines)  # what a visitor typed stays out of the log
    assert second["request_id"] == bad.headers["x-request-id"] != "not ok"
    assert len(second["request_id"]) == 32  # a made one


def test_every_line_the_server_logs_is_one_json_object_whatever_it_holds(client_for, capsys):
    """With the access log on, stderr is JSON lines only: a path holding a line or paragraph
    separator (which many readers split on) stays on its line, and the warnings of the
    database pool and of whichgpu itself (multi-line in plain text) are JSON lines too."""
    import logging

    c = client_for(WHICHGPU_ACCESS_LOG="1")
    capsys.readouterr()
    c.get("/api/v1/gpus/a%E2%80%A8b%C2%85c%E2%80%A9d")  # U+2028, NEL, U+2029
    logging.getLogger("psycopg.pool").warning(
        "error connecting in 'whichgpu-prices-1': connection failed\n\tIs the server running?")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("whichgpu.web").exception("price store: %s", "unreachable")
    err = capsys.readouterr().err
    records = [json.loads(line) for line in err.splitlines()]  # str.splitlines: every break
    assert [r["event"] for r in records] == ["request", "log", "log"], err
    request, pool, app_error = records
    assert request["path"] == "/api/v1/gpus/a\u2028b\x85c\u2029d"
    assert pool["level"] == "WARNING" and pool["logger"] == "psycopg.pool"
    assert "Is the server running?" in pool["message"] and pool["pid"]
    assert app_error["level"] == "ERROR" and "RuntimeError: boom" in app_error["message"]
    assert all(set(r) >= {"time", "event", "pid"} for r in records)
