"""Measured runs over REST: GET /api/v1/runs is open, POST /api/v1/runs is a write (the
operator's token: 401 without, 403 with a wrong one or none configured, the store unchanged),
and an added run moves the REST answer at once."""

from __future__ import annotations

from paths import DATA
from whichgpu.web.writes import NO_TOKEN, TOKEN_ENV, TOKEN_FILE_ENV

DATA = DATA / "runs"
TOKEN = "s3cret-token-for-tests-0123456789"
SPEED = {"model": "llama-3.1-8b", "quant": "q4_k_m", "gpu": "rtx-4090", "engine": "llamacpp"}


def post(web, name: str, token: str | None = None, **params):
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return web.post("/api/v1/runs", params=params, headers=headers,
                    content=(DATA / name).read_bytes())


def listed(web) -> list[int]:
    r = web.get("/api/v1/runs")
    assert r.status_code == 200, r.text
    return [run["id"] for run in r.json()["runs"]]


def test_writes_without_the_token_are_refused_and_store_nothing(web, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.delenv(TOKEN_FILE_ENV, raising=False)
    off = post(web, "llama-bench-rtx4090.json", TOKEN)
    assert off.status_code == 403 and off.json()["detail"] == NO_TOKEN
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    missing = post(web, "llama-bench-rtx4090.json")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    wrong = post(web, "llama-bench-rtx4090.json", TOKEN[:-1] + "x")
    assert wrong.status_code == 403
    assert listed(web) == []  # nothing stored by any refused write
    for r in (off, missing, wrong):
        assert TOKEN not in r.text


def test_with_the_token_runs_are_stored_listed_and_used_by_the_answers(web, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    before = web.post("/api/v1/speed", json=SPEED).json()
    assert "measured_runs" not in before
    added = post(web, "llama-bench-rtx4090.json", TOKEN)
    assert added.status_code == 200, added.text
    body = added.json()
    assert body["count"] == 2 and "store" not in body
    assert listed(web) == [r["id"] for r in body["runs"]]
    after = web.post("/api/v1/speed", json=SPEED).json()
    assert after["measured_runs"]["summary"] == "from 2 run(s) of this store"
    old, new = (a["decode_tokens_per_s_per_sequence"] for a in (before, after))
    assert new["high"] / new["low"] < old["high"] / old["low"]


def test_a_bad_upload_is_422_naming_the_field_and_stores_nothing(web, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    r = post(web, "vllm-bench-serve-h100.json", TOKEN)  # names no card
    assert r.status_code == 422
    assert "field 'gpu' is missing" in r.text and "Traceback" not in r.text
    r = post(web, "vllm-bench-serve-h100.json", TOKEN, gpu="rtx-4090x")
    assert r.status_code == 422 and "did you mean rtx-4090" in r.text
    assert listed(web) == []
    ok = post(web, "vllm-bench-serve-h100.json", TOKEN, gpu="h100-sxm")
    assert ok.status_code == 200 and ok.json()["runs"][0]["source"] == "REST upload"
