"""The REST API answers with the CLI's JSON, and with the CLI's one-line reason (422) for bad
input: every endpoint, good and bad input, the limits, and parity with ``--json``."""

from __future__ import annotations

import pytest

from whichgpu.units import GB

ARTICLE_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm")
VOLATILE = {"age_s", "stale"}  # how old a price is depends on the second it is asked


def stable(data):
    """JSON without the keys that depend on the clock."""
    if isinstance(data, dict):
        return {k: stable(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [stable(v) for v in data]
    return data


def cli_error(result) -> str:
    """The CLI's one-line reason (stderr 'error: ...')."""
    assert result.code == 2, result.err
    return result.err.strip().removeprefix("error: ")


def same_as_cli(web, cli, url: str, *args: str) -> dict:
    r = web.get(url)
    assert r.status_code == 200, r.text
    c = cli(*args, "--json")
    assert c.code == 0, c.err
    assert stable(r.json()) == stable(c.json())
    return r.json()


def same_error(web, cli, url: str, *args: str) -> str:
    r = web.get(url)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/json")
    reason = r.json()["detail"]
    assert reason == cli_error(cli(*args))
    return reason


# ------------------------------------------------------------------ catalog

def test_gpus_is_the_cli_catalog_with_cost_per_tflop(web, cli):
    data = same_as_cli(web, cli, "/api/v1/gpus?prices=article-000&precision=article-000:fp16"
                       "&priced_only=true", "gpus", "--prices", "article-000", "--precision",
                       "article-000:fp16", "--priced-only")
    first = data["gpus"][0]
    assert first["id"] == "rtx-4090"  # S2: the 4090 ranks first on the article's figures
    assert first["cost_per_tflop_hour"]["currency"] == "USD"


def test_gpus_filters_and_sorts_like_the_cli(web, cli):
    same_as_cli(web, cli, "/api/v1/gpus?min_memory=48GB&vendor=nvidia&sort=memory",
                "gpus", "--min-memory", "48GB", "--vendor", "nvidia", "--sort", "memory")


def test_gpus_bad_precision_is_422_with_the_cli_reason(web, cli):
    reason = same_error(web, cli, "/api/v1/gpus?precision=fp17", "gpus", "--precision", "fp17")
    assert "fp17" in reason


def test_one_gpu_has_sources_offers_and_best_uses(web, cli):
    data = same_as_cli(web, cli, "/api/v1/gpus/rtx-4090", "gpu", "rtx-4090")
    assert data["sources"] and data["best_uses"] and data["offers"]
    fr = web.get("/api/v1/gpus/rtx-4090?lang=fr").json()
    assert fr["best_uses"][0]["text"] != data["best_uses"][0]["text"]


def test_unknown_gpu_suggests_the_closest(web, cli):
    reason = same_error(web, cli, "/api/v1/gpus/h10", "gpu", "h10")
    assert "did you mean" in reason


# ------------------------------------------------------------------ models

def test_models_lists_the_presets(web, cli):
    data = same_as_cli(web, cli, "/api/v1/models", "models")
    assert any(m["alias"] == "llama-3.1-70b" for m in data["models"])


def test_model_by_alias_size_and_preset_hub_id(web, cli):
    same_as_cli(web, cli, "/api/v1/models/llama-3.1-8b", "model", "llama-3.1-8b")
    same_as_cli(web, cli, "/api/v1/models/70B", "model", "70B")
    data = web.get("/api/v1/models/meta-llama/Llama-3.1-8B-Instruct").json()
    assert data["params_total"] > 7e9


def test_unknown_hub_id_offline_is_422_with_the_cli_reason(web, cli):
    same_error(web, cli, "/api/v1/models/someone/not-a-model", "model", "someone/not-a-model")


@pytest.mark.parametrize("name", ["../../etc/passwd", "./config.json", "/etc/hostname",
                                  "model.gguf", "pyproject.toml", "src"])
def test_the_server_reads_no_files(web, name):
    r = web.get("/api/v1/memory", params={"model": name})
    assert r.status_code == 422
    assert "reads no files" in r.json()["detail"]


def test_hub_ids_are_checked_before_any_lookup(web, monkeypatch):
    import whichgpu.models.hub as hub

    monkeypatch.setattr(hub, "spec_from_hub", lambda *a, **k: pytest.fail("looked up"))
    r = web.get("/api/v1/models/not a hub id")
    assert r.status_code == 422


def test_a_slow_hub_lookup_times_out_with_503(web, monkeypatch):
    import time

    import whichgpu.models.hub as hub
    from whichgpu.web import resolve

    monkeypatch.setattr(resolve, "HUB_TIMEOUT_S", 0.2)
    monkeypatch.setattr(resolve.with_timeout, "__defaults__", (0.2,))
    monkeypatch.setattr(hub, "spec_from_hub", lambda *a, **k: time.sleep(1))
    r = web.get("/api/v1/models/slow-org/slow-model")
    assert r.status_code == 503
    assert "did not answer" in r.json()["detail"]


# ------------------------------------------------------------------ memory (VRAM selector)

def test_memory_s27_70b_4bit_weights_about_43_gb(web, cli):
    data = same_as_cli(web, cli, "/api/v1/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k",
                       "memory", "llama-3.1-70b", "--quant", "q4_k_m", "--context", "8k")
    assert 41 <= data["breakdown"]["weights"] / GB <= 45  # S27: ~43 GB + cache
    assert data["breakdown"]["kv_cache"] > 2 * GB
    assert any(f["gpu"] == "rtx-a6000" and f["count"] == 1 for f in data["fits"])  # 48 GB card
    assert data["rule_of_thumb"]["source"] == "S15"


def test_memory_post_body_equals_get(web):
    params = {"model": "llama-3.1-8b", "task": "lora", "context": "2k", "batch": 2}
    assert web.post("/api/v1/memory", json=params).json() == \
        web.get("/api/v1/memory", params=params).json()


def test_memory_from_a_pasted_config_json(web):
    config = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "vocab_size": 128256, "max_position_embeddings": 131072,
              "torch_dtype": "bfloat16"}
    r = web.post("/api/v1/memory", json={"config": config, "context": "8k"})
    assert r.status_code == 200, r.text
    assert 14 * GB <= r.json()["breakdown"]["weights"] <= 17 * GB  # an 8B in bf16


def test_memory_bad_quant_has_the_cli_reason(web, cli):
    same_error(web, cli, "/api/v1/memory?model=llama-3.1-8b&quant=q9", "memory", "llama-3.1-8b",
               "--quant", "q9")


def test_memory_target_gpu_says_whether_it_fits(web):
    data = web.get("/api/v1/memory?model=llama-3.1-70b&quant=q4_k_m&gpu=rtx-4090").json()
    assert data["target"]["fits"] is False
    assert data["suggestions"]


# ------------------------------------------------------------------ speed

def test_speed_is_the_cli_speed(web, cli):
    data = same_as_cli(web, cli, "/api/v1/speed?model=llama-3.1-70b&quant=awq&gpu=h100-sxm",
                       "speed", "llama-3.1-70b", "--quant", "awq", "--gpu", "h100-sxm")
    assert data["fits"] is True


def test_speed_says_when_it_does_not_fit(web, cli):
    data = same_as_cli(web, cli, "/api/v1/speed?model=llama-3.1-70b&quant=awq&gpu=rtx-4090",
                       "speed", "llama-3.1-70b", "--quant", "awq", "--gpu", "rtx-4090")
    assert data["fits"] is False  # S25: 70B 4-bit does not fit a 4090


def test_speed_needs_a_gpu(web):
    r = web.get("/api/v1/speed?model=llama-3.1-8b")
    assert r.status_code == 422
    assert "gpu" in r.json()["detail"]


# ------------------------------------------------------------------ recommend and checklist

FLUX = ("/api/v1/recommend?model=flux.1-dev&task=image&quant=fp8&images=1000"
        "&prices=vramfarm-2026-11")


def test_recommend_is_the_cli_recommendation(web, cli):
    same_as_cli(web, cli, FLUX, "recommend", "flux.1-dev", "--task", "image", "--quant", "fp8",
                "--images", "1000", "--prices", "vramfarm-2026-11")


def test_recommend_flux_4090_first_of_the_article_cards(web):
    data = web.get(FLUX + "&top=0").json()
    order = [o["gpu"] for o in data["options"] if o["gpu"] in ARTICLE_CARDS]
    assert order[0] == "rtx-4090"  # S25: images -> the 4090 is far cheapest
    only = web.get(FLUX + "&only=" + ",".join(ARTICLE_CARDS)).json()
    assert only["options"][0]["gpu"] == "rtx-4090"
    assert {o["gpu"] for o in only["options"]} <= set(ARTICLE_CARDS)
    assert only["pareto"] and only["explanation"]


def test_recommend_post_body(web):
    body = {"model": "llama-3.1-70b", "quant": "awq", "tokens": "1M",
            "prices": "vramfarm-2026-11", "top": 3}
    data = web.post("/api/v1/recommend", json=body).json()
    assert len(data["options"]) == 3
    assert not any(o["gpu"] == "rtx-4090" and o["count"] == 1 for o in data["options"])


def test_recommend_bad_job_has_the_cli_reason(web, cli):
    same_error(web, cli, "/api/v1/recommend?model=llama-3.1-8b&images=10",
               "recommend", "llama-3.1-8b", "--images", "10")


def test_checklist_is_the_cli_checklist(web, cli):
    data = same_as_cli(web, cli, "/api/v1/checklist?workload=inference&model=7B"
                       "&budget_per_hour=1USD&hours_per_month=50&horizon_months=6",
                       "checklist", "--workload", "inference", "--model", "7B",
                       "--budget-per-hour", "1USD", "--hours-per-month", "50",
                       "--horizon-months", "6")
    assert data["decision"] == "rent"  # S13: under 100 h/month, always rent


def test_checklist_bad_workload_has_the_cli_reason(web, cli):
    same_error(web, cli, "/api/v1/checklist?workload=dreaming&model=7B&budget_per_hour=none"
               "&hours_per_month=50&horizon_months=6", "checklist", "--workload", "dreaming",
               "--model", "7B", "--budget-per-hour", "none", "--hours-per-month", "50",
               "--horizon-months", "6")


def test_checklist_missing_answer_is_422(web):
    r = web.get("/api/v1/checklist?workload=inference")
    assert r.status_code == 422
    assert "model" in r.json()["detail"]


# ------------------------------------------------------------------ money

def test_tco_h100_break_even_is_7937_hours(web, cli):
    data = same_as_cli(web, cli, "/api/v1/tco?gpu=h100-sxm&purchase_price=25000USD"
                       "&rent_price=3.15USD&utilization=1&cooling_per_hour=0.02USD",
                       "tco", "h100-sxm", "--purchase-price", "25000USD", "--rent-price",
                       "3.15USD", "--utilization", "1", "--cooling-per-hour", "0.02USD")
    assert round(data["break_even_hours_capital_only"]) == 7937  # S11
    assert data["curve"][0]["own"]["amount"] == 25000
    assert data["advice"]["decision"] in ("rent", "buy")


def test_tco_bad_utilization_has_the_cli_reason(web, cli):
    same_error(web, cli, "/api/v1/tco?gpu=h100-sxm&utilization=150", "tco", "h100-sxm",
               "--utilization", "150")


def test_tco_post_body(web):
    r = web.post("/api/v1/tco", json={"gpu": "rtx-4090", "hours_per_month": 100})
    assert r.status_code == 200
    assert r.json()["inputs"]["hours_per_month"] == pytest.approx(100)


def test_cost_is_the_cli_cost(web, cli):
    data = same_as_cli(web, cli, "/api/v1/cost?gpu=rtx-4090&duration=3h20m&prices=vramfarm-2026-11"
                       "&work=1000&unit=image", "cost", "--gpu", "rtx-4090", "--duration",
                       "3h20m", "--prices", "vramfarm-2026-11", "--work", "1000", "--unit",
                       "image")
    assert data["cost"]["typical"]["amount"] == pytest.approx(1.97, abs=0.01)  # S25: €1.96


def test_cost_bad_duration_has_the_cli_reason(web, cli):
    same_error(web, cli, "/api/v1/cost?gpu=rtx-4090&duration=4h..2h", "cost", "--gpu",
               "rtx-4090", "--duration", "4h..2h")


# ------------------------------------------------------------------ prices

def test_prices_latest_is_the_cli_list(web, cli):
    data = same_as_cli(web, cli, "/api/v1/prices?gpu=h100", "prices", "list", "h100")
    assert all(o["gpu"].startswith("h100") for o in data["offers"])
    assert all("age_s" in o for o in data["offers"])


def test_prices_history_is_the_cli_history(web, cli):
    data = same_as_cli(web, cli, "/api/v1/prices/history?gpu=rtx-4090", "prices", "history",
                       "rtx-4090")
    assert data["points"]


def test_prices_spot_and_on_demand_exclude_each_other(web, cli):
    same_error(web, cli, "/api/v1/prices?spot=true&on_demand=true", "prices", "list", "--spot",
               "--on-demand")


@pytest.mark.parametrize("prices", ["/etc/passwd.csv", "../offers.json", "pyproject.toml"])
def test_prices_never_read_a_file(web, prices):
    r = web.get("/api/v1/prices", params={"prices": prices})
    assert r.status_code == 422
    assert "reads no offer files" in r.json()["detail"]


# ------------------------------------------------------------------ limits and errors

def test_body_too_large_is_413(web):
    r = web.post("/api/v1/memory", content=b"{" + b" " * 200_000 + b"}",
                 headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_query_too_long_is_414(web):
    r = web.get("/api/v1/gpus?vendor=" + "x" * 5000)
    assert r.status_code == 414


@pytest.mark.parametrize("url", ["/api/v1/memory?model=llama-3.1-8b&batch=0",
                                 "/api/v1/memory?model=llama-3.1-8b&batch=lots",
                                 "/api/v1/memory?model=" + "x" * 300,
                                 "/api/v1/memory?model=llama-3.1-8b&colour=blue",
                                 "/api/v1/tco?gpu=h100-sxm&years=-1"])
def test_out_of_bounds_input_is_422_with_one_line(web, url):
    r = web.get(url)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail


def test_a_bug_is_a_500_json_without_traceback(web, monkeypatch):
    from whichgpu.web import services

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(services, "models", boom)
    r = web.get("/api/v1/models")
    assert r.status_code == 500
    assert "internal error" in r.json()["detail"]
    assert "Traceback" not in r.text


def test_openapi_lists_every_endpoint_and_docs_are_local(web):
    paths = web.get("/openapi.json").json()["paths"]
    for p in ("/api/v1/gpus", "/api/v1/gpus/{gpu_id}", "/api/v1/models",
              "/api/v1/models/{model_id}", "/api/v1/memory", "/api/v1/speed",
              "/api/v1/recommend", "/api/v1/tco", "/api/v1/cost", "/api/v1/checklist",
              "/api/v1/prices", "/api/v1/prices/history"):
        assert p in paths, p
    docs = web.get("/docs").text
    assert "/docs-assets/swagger-ui-bundle.js" in docs
    assert "cdn" not in docs.lower()
    assert web.get("/docs-assets/swagger-ui-bundle.js").status_code == 200


def test_health(web):
    assert web.get("/api/v1/health").json()["status"] == "ok"
