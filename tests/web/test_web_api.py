"""The REST API answers with the CLI's JSON, and with the CLI's one-line reason (422) for bad
input: every endpoint, good and bad input, the limits, and parity with ``--json``."""

from __future__ import annotations

import pytest

from web_parity import cli_error, same_as_cli, same_error
from whichgpu.units import GB

ARTICLE_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm")

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
    assert web.get("/api/v1/gpus/rtx-4090?lang=fr-FR").json() == fr
    r = web.get("/api/v1/gpus/rtx-4090?lang=de")
    assert r.status_code == 422 and r.json()["detail"] == "unknown language 'de'; use en or fr"


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
    """The CLI's reason names the variable and a local file; the server's names neither (its
    caller can set none of the server's variables and it reads no local config.json)."""
    r = web.get("/api/v1/models/someone/not-a-model")
    assert r.status_code == 422
    reason = cli_error(cli("model", "someone/not-a-model"))
    assert "pass a local config.json or a preset" in reason and "HF_HUB_OFFLINE" in reason
    assert r.json()["detail"] == (
        "someone/not-a-model: this server does not look models up on the Hugging Face Hub and "
        "has not cached the model's config.json: paste the config.json or use a preset")


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
    assert any(f["gpu"] == "rtx-a6000" and f["count"] == 1  # a 48 GB card
               for f in data["gpus_that_fit"])
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


def test_speed_training_total_and_framework_are_the_clis(web, cli):
    """Training totals (``train_tokens``, optimizer ``steps``) and the framework's MFU."""
    data = same_as_cli(web, cli, "/api/v1/speed?model=llama-3.1-8b&task=lora&context=2k"
                       "&gpu=h100-sxm&train_tokens=100M&framework=unsloth",
                       "speed", "llama-3.1-8b", "--task", "lora", "--context", "2k", "--gpu",
                       "h100-sxm", "--train-tokens", "100M", "--framework", "unsloth")
    tps = data["tokens_per_s"]["typical"]
    assert data["total_s"]["typical"] == pytest.approx(100e6 / tps, rel=0.02)
    plain = web.get("/api/v1/speed?model=llama-3.1-8b&task=lora&context=2k&gpu=h100-sxm").json()
    # unsloth's fused kernels: a higher MFU (its default offloaded checkpointing recomputes
    # each layer, so the tokens/s are compared at the same recompute)
    assert data["mfu_assumed"] > plain["mfu_assumed"]
    same = web.get("/api/v1/speed?model=llama-3.1-8b&task=lora&context=2k&gpu=h100-sxm"
                   "&framework=unsloth&gradient_checkpointing=false").json()
    assert same["tokens_per_s"]["typical"] > plain["tokens_per_s"]["typical"]


def test_speed_of_a_bare_size_says_it_is_approximate(web, cli):
    for args, url in ((("70B", "--gpu", "h200-sxm"), "model=70B&gpu=h200-sxm"),
                      (("70B", "--gpu", "rtx-4090"), "model=70B&gpu=rtx-4090"),  # no fit
                      (("llama-3.1-8b", "--gpu", "h200-sxm"), "model=llama-3.1-8b&gpu=h200-sxm")):
        data = same_as_cli(web, cli, f"/api/v1/speed?{url}", "speed", *args)
        assert data["approximate"] is (args[0] == "70B")


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


def test_checklist_only_and_max_age_are_the_clis(web, cli):
    """``only`` narrows the cards as ``--only`` does; ``max_age`` is passed to the prices."""
    data = same_as_cli(web, cli, "/api/v1/checklist?workload=inference&model=7B"
                       "&budget_per_hour=none&hours_per_month=50&horizon_months=6"
                       "&only=rtx-4090,l40s&max_age=3650",
                       "checklist", "--workload", "inference", "--model", "7B",
                       "--budget-per-hour", "none", "--hours-per-month", "50",
                       "--horizon-months", "6", "--only", "rtx-4090,l40s", "--max-age", "3650")
    gpus = {o["gpu"] for o in data["recommendation"]["options"]}
    assert gpus and gpus <= {"rtx-4090", "l40s"}


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


def test_prices_history_is_the_cli_history_without_the_server_path(web, cli):
    data = same_as_cli(web, cli, "/api/v1/prices/history?gpu=rtx-4090", "prices", "history",
                       "rtx-4090", server_only=("store",))
    assert data["points"]
    assert "store" not in data  # the CLI shows its store's path; a server keeps it to itself


def test_prices_history_of_one_feed(web):
    data = web.get("/api/v1/prices/history?gpu=rtx-4090&feed=vramfarm-2026-11").json()
    assert data["points"] and {p["feed"] for p in data["points"]} == {"vramfarm-2026-11"}


@pytest.mark.parametrize(("url", "words"), [
    ("/api/v1/prices/history?gpu=rtx-4090&feed=vramfarm-2026", "did you mean vramfarm-2026-11"),
    ("/api/v1/prices/history?gpu=rtx-4090&feed=zzz", "unknown price feed 'zzz'"),
    ("/api/v1/prices/history", "Missing option '--gpu'"),
    ("/api/v1/prices/history?gpu=h10", "did you mean"),
    ("/api/v1/prices/history?gpu=nosuchgpu", "unknown GPU"),
])
def test_prices_history_bad_input_is_422(web, url, words):
    r = web.get(url)
    assert r.status_code == 422
    assert words in r.json()["detail"]


def test_models_unknown_family_is_422(web, cli):
    r = web.get("/api/v1/models?family=zzz")
    assert r.status_code == 422
    assert r.json()["detail"] == "unknown family 'zzz'; use decoder or diffusion"


def test_speed_bad_prompt_tokens_has_the_cli_reason(web, cli):
    reason = same_error(web, cli, "/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm"
                        "&prompt_tokens=lots", "speed", "llama-3.1-8b", "--gpu", "h100-sxm",
                        "--prompt-tokens", "lots")
    assert "'lots'" in reason


def test_prices_spot_and_on_demand_exclude_each_other(web, cli):
    same_error(web, cli, "/api/v1/prices?spot=true&on_demand=true", "prices", "list", "--spot",
               "--on-demand")


@pytest.mark.parametrize("prices", ["/etc/passwd.csv", "../offers.json", "pyproject.toml"])
def test_prices_never_read_a_file(web, prices):
    r = web.get("/api/v1/prices", params={"prices": prices})
    assert r.status_code == 422
    assert "reads no offer files" in r.json()["detail"]


# ------------------------------------------------------------------ limits and errors

@pytest.mark.parametrize(("url", "args"), [
    ("/api/v1/memory?model=llama-3.1-8b&batch=0", ("memory", "llama-3.1-8b", "--batch", "0")),
    ("/api/v1/memory?model=llama-3.1-8b&gpus=0", ("memory", "llama-3.1-8b", "--gpus", "0")),
    ("/api/v1/memory?model=llama-3.1-8b&tp=0", ("memory", "llama-3.1-8b", "--tp", "0")),
    ("/api/v1/memory?model=llama-3.1-8b&zero=5", ("memory", "llama-3.1-8b", "--zero", "5")),
    ("/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&count=0",
     ("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--count", "0")),
    ("/api/v1/tco?gpu=h100-sxm&years=40", ("tco", "h100-sxm", "--years", "40")),
    ("/api/v1/tco?gpu=h100-sxm&years=-1", ("tco", "h100-sxm", "--years", "-1")),
    ("/api/v1/tco?gpu=h100-sxm&pue=5", ("tco", "h100-sxm", "--pue", "5")),
    ("/api/v1/tco?gpu=h100-sxm&tdp=0", ("tco", "h100-sxm", "--tdp", "0")),
    ("/api/v1/tco?gpu=h100-sxm&load_factor=2", ("tco", "h100-sxm", "--load-factor", "2")),
    ("/api/v1/tco?gpu=h100-sxm&hours_per_month=800",
     ("tco", "h100-sxm", "--hours-per-month", "800")),
    ("/api/v1/cost?gpu=rtx-4090&duration=1h&count=0",
     ("cost", "--gpu", "rtx-4090", "--duration", "1h", "--count", "0")),
])
def test_out_of_range_numbers_have_the_cli_reason(web, cli, url, args):
    """pydantic's bounds answer in the CLI's words: 'batch must be a whole number >= 1, got
    0', not 'batch: Input should be greater than or equal to 1'."""
    reason = same_error(web, cli, url, *args)
    assert "Input should" not in reason


@pytest.mark.parametrize(("url", "words"), [
    # the engine's own bounds, worded as on the command line
    ("/api/v1/memory?model=llama-3.1-8b&context=1e30",
     "context 1e+30 is beyond what whichgpu models (at most 16,777,216)"),
    ("/api/v1/memory?model=llama-3.1-8b&context=11M", "exceeds Llama 3.1 8B's trained maximum"),
    ("/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=1e30",
     "prompt tokens 1e+30 is beyond what whichgpu models"),
    ("/api/v1/recommend?model=llama-3.1-8b&tokens=1e40", "tokens must be at most 10^15"),
    ("/api/v1/recommend?model=llama-3.1-8b&tokens_per_day=1e40",
     "tokens per day must be at most 10^15"),
    ("/api/v1/recommend?model=llama-3.1-8b&tokens=1M&budget=1e300USD",
     "budget must be at most 10^12"),
    ("/api/v1/recommend?model=llama-3.1-8b&tokens=1M&deadline=99999999999h",
     "deadline must be at most 100 years"),
    ("/api/v1/recommend?model=llama-3.1-8b&tokens=1M&currency=EUR&rate=EURUSD=1e300",
     "must be between 10^-7 and 10^7"),
    ("/api/v1/tco?gpu=h100-sxm&purchase_price=1e308USD",
     "purchase price 1e+308 USD is above the $1,000,000 bound"),
    ("/api/v1/tco?gpu=h100-sxm&kwh_price=1e25USD", "kwh price 1e+25 USD is above the $5.00 bound"),
    ("/api/v1/cost?gpu=rtx-4090&duration=1h&work=1e40", "--work must be more than 0 and at most"),
    ("/api/v1/cost?gpu=rtx-4090&duration=1h..999999999999h", "more than 10 years is not a run"),
    ("/api/v1/checklist?workload=inference&model=7B&budget_per_hour=1e30USD"
     "&hours_per_month=10&horizon_months=6", "budget per hour must be at most 10^12"),
])
def test_huge_magnitudes_are_422_not_absurd_answers(web, url, words):
    """Without the bounds, context=1e30 answered 200 with 3.6e26 GB of KV cache."""
    r = web.get(url)
    assert r.status_code == 422, r.text[:300]
    assert words in r.json()["detail"]


def test_bounds_let_large_real_jobs_through(web):
    assert web.get("/api/v1/memory?model=llama-3.1-8b&context=128k").status_code == 200
    # Scout's 10M: beyond a generic decoder's trained maximum unless RoPE scaling is claimed
    r = web.get("/api/v1/memory?params=100B&context=10M")
    assert r.status_code == 422 and "--allow-long-context" in r.json()["detail"]
    r = web.get("/api/v1/memory?params=100B&context=10M&allow_long_context=true")
    assert r.status_code == 200
    r = web.get("/api/v1/tco?gpu=h100-sxm&purchase_price=30000EUR&currency=EUR")
    assert r.status_code == 200
    assert web.get("/api/v1/recommend?model=llama-3.1-8b&tokens=15T&top=1").status_code == 200


def test_a_chunked_body_over_the_limit_is_413(web):
    """No Content-Length: the body arrives in pieces and is refused once it passes 128 KB."""
    def pieces():
        yield b'{"model": "llama-3.1-8b", "task": "'
        for _ in range(20):
            yield b"x" * 8192
        yield b'"}'

    r = web.post("/api/v1/memory", content=pieces(), headers={"content-type": "application/json"})
    assert r.request.headers.get("transfer-encoding") == "chunked"
    assert r.status_code == 413
    assert "larger than" in r.json()["detail"]


def test_a_small_chunked_body_is_read(web):
    def pieces():
        yield b'{"model": "llama-3.1-8b",'
        yield b' "context": "2k"}'

    r = web.post("/api/v1/memory", content=pieces(), headers={"content-type": "application/json"})
    assert r.status_code == 200
    assert r.json() == web.get("/api/v1/memory?model=llama-3.1-8b&context=2k").json()


# The Hub look-up's limits (deadline, byte cap, no retries, pool, kept failures) are tested
# in tests/models/test_hub_lookup_deadlines.py.


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


# ------------------------------------------------------------------ calibration (issue 10)

SPEED_H200 = ("/api/v1/speed?model=llama-3.1-8b&gpu=h200-sxm&engine=vllm&prompt_tokens=512"
              "&output_tokens=128")


def _save_measured_h200(bf16=600.0, bw=3.6e12):
    """The bench tests' H200, measured at 600 of 989 TFLOPS and 3.6 of 4.8 TB/s, saved where
    'whichgpu bench' saves (the user's data folder)."""
    from profile_files import _entry
    from whichgpu.bench.profile import SCHEMA, save_profile

    return save_profile({"schema": SCHEMA, "created_at": "2026-11-30T12:00:00Z",
                         "host": "test", "gpus": [_entry(0, bf16=bf16, bw=bw)]})


def test_a_saved_profile_changes_the_speed_for_the_gpu_it_measured(web, cli):
    before = web.get(SPEED_H200).json()
    _save_measured_h200()
    plain = web.get(SPEED_H200).json()
    measured = web.get(SPEED_H200 + "&calibration=default").json()
    assert plain == before  # only when asked
    key = "decode_tokens_per_s_per_sequence"
    assert measured[key]["typical"] < 0.95 * plain[key]["typical"]  # 3.6 of 4.8 TB/s
    # the profile by its file's name, not by the server's path
    assert measured["calibration"] == ("calibration profile calibration.json "
                                       "(2026-11-30T12:00:00Z)")
    c = cli("speed", "llama-3.1-8b", "--gpu", "h200-sxm", "--engine", "vllm",
            "--prompt-tokens", "512", "--output-tokens", "128", "--calibration", "default",
            "--json")
    assert c.json()[key] == measured[key]  # the CLI's --calibration default, same numbers
    other = "/api/v1/speed?model=llama-3.1-8b&gpu=h100-sxm&engine=vllm&prompt_tokens=512"
    assert web.get(other + "&calibration=default").json()[key] == web.get(other).json()[key]


def test_recommend_uses_the_profile_when_asked(web):
    url = ("/api/v1/recommend?model=llama-3.1-8b&tokens=10M&prices=article-000"
           "&only=h200-sxm&top=1")
    plain = web.get(url).json()["options"][0]
    _save_measured_h200()
    measured = web.get(url + "&calibration=default").json()["options"][0]
    assert measured["gpu"] == "h200-sxm"
    assert measured["time_s"]["typical"] > plain["time_s"]["typical"]


@pytest.mark.parametrize("value", ["/etc/passwd", "calibration.json", "../x.json", "yes"])
def test_a_request_can_never_name_a_profile_file(web, value):
    _save_measured_h200()
    r = web.get(SPEED_H200, params={"calibration": value})
    assert r.status_code == 422
    assert "reads no file named in a request" in r.json()["detail"]


def test_calibration_without_a_saved_profile_says_what_to_do(web):
    r = web.get(SPEED_H200 + "&calibration=default")
    assert r.status_code == 422
    assert "whichgpu bench" in r.json()["detail"]


def test_serve_calibration_file_chooses_the_servers_profile(tmp_path):
    """'whichgpu serve --calibration FILE': the operator's file is what 'default' means."""
    from fastapi.testclient import TestClient

    from profile_files import _entry, _profile
    from whichgpu.web import services
    from whichgpu.web.app import create_app

    path = _profile(tmp_path, [_entry(0, bw=2.4e12)], name="operator.json")
    services.clear_cache()
    try:
        with TestClient(create_app(str(path))) as client:
            data = client.get(SPEED_H200 + "&calibration=default").json()
            assert "operator.json" in data["calibration"] and str(tmp_path) not in data[
                "calibration"]
        with TestClient(create_app("none")) as client:
            r = client.get(SPEED_H200 + "&calibration=default")
            assert r.status_code == 422 and "turned calibration off" in r.json()["detail"]
    finally:
        services.set_calibration("default")
        services.clear_cache()


def test_health(web):
    assert web.get("/api/v1/health").json()["status"] == "ok"


def test_no_priced_answer_shows_the_store_path(web):
    for url in ("/api/v1/gpus", "/api/v1/prices?gpu=h100",
                "/api/v1/cost?gpu=rtx-4090&duration=1h"):
        r = web.get(url)
        assert r.status_code == 200, r.text
        assert "prices.sqlite" not in r.text and "whichgpu-home" not in r.text


def test_an_unusable_store_is_a_503_without_its_path(web, tmp_path, monkeypatch):
    bad = tmp_path / "locked-away" / "prices.sqlite"
    bad.parent.mkdir()
    bad.write_text("not sqlite " * 300)
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(bad))
    from whichgpu.web import services

    services.clear_cache()
    r = web.get("/api/v1/prices/history?gpu=h100")
    assert r.status_code == 503
    assert "price store" in r.json()["detail"] and str(bad) not in r.text
    ok = web.get("/api/v1/prices?gpu=h100")  # the default falls back to the shipped prices
    assert ok.status_code == 200 and str(bad) not in ok.text
