"""memory, speed, recommend, checklist and validate as a user runs them."""


def test_memory_json_has_total_breakdown_and_fits(cli):
    r = cli("memory", "llama-3.1-70b", "--quant", "q4_k_m", "--context", "8k", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["total_bytes"] == sum(d["breakdown"].values())
    assert 41e9 <= d["breakdown"]["weights"] <= 45e9  # S27: about 43 GB
    fits = {(f["gpu"], f["count"]) for f in d["gpus_that_fit"]}
    assert ("rtx-a6000", 1) in fits and ("a100-80gb-sxm", 1) in fits
    assert all({"gpu", "count", "headroom_bytes"} <= set(f) for f in d["gpus_that_fit"])
    assert d["rule_of_thumb"]["source"] == "S15"


def test_memory_table_shows_terms_and_gb_and_gib(cli):
    r = cli("memory", "llama-3.1-8b", "--task", "qlora", "--context", "2k")
    assert r.code == 0 and "weights" in r.out and "GiB" in r.out and "Fits on" in r.out


def test_memory_for_a_gpu_says_what_would_make_it_fit(cli):
    r = cli("memory", "llama-3.1-70b", "--quant", "bf16", "--gpu", "h100-sxm", "--json")
    d = r.json()
    assert d["target"]["fits"] is False
    assert any("awq" in s["change"] or "x h100-sxm" in s["change"] for s in d["suggestions"])


def test_memory_bad_inputs_exit_2_without_traceback(cli):
    for args in (("--context", "0"), ("--batch", "0"), ("--task", "image"),
                 ("--lora-rank", "100000", "--task", "lora"), ("--quant", "q9")):
        r = cli("memory", "llama-3.1-8b", *args)
        assert r.code == 2 and "Traceback" not in r.err, args
    r = cli("memory", "lama-3.1-8b")
    assert r.code == 2 and "did you mean" in r.err


def test_speed_json_for_inference_training_and_images(cli):
    inf = cli("speed", "llama-3.1-8b", "--gpu", "rtx-4090", "--quant", "q4_k_m",
              "--json").json()
    for key in ("decode_tokens_per_s", "prefill_tokens_per_s"):
        assert inf[key]["low"] <= inf[key]["typical"] <= inf[key]["high"]
    assert inf["bound"] and inf["fits"] is True
    train = cli("speed", "llama-3.1-8b", "--gpu", "h100-sxm", "--task", "lora",
                "--json").json()
    assert train["tokens_per_s"]["typical"] > 0 and 0 < train["mfu"] < 1
    img = cli("speed", "sdxl", "--gpu", "rtx-4090", "--task", "image", "--json").json()
    assert img["images_per_min"]["typical"] > 0


def test_speed_on_a_gpu_that_cannot_hold_it_gives_no_speed(cli):
    r = cli("speed", "llama-3.1-70b", "--gpu", "rtx-4090", "--quant", "bf16", "--json")
    assert r.code == 0
    d = r.json()
    assert d["fits"] is False and "decode_tokens_per_s" not in d


def test_recommend_json_and_table(cli):
    r = cli("recommend", "flux.1-dev", "--task", "image", "--quant", "fp8", "--images",
            "1000", "--sampling-steps", "20", "--prices", "vramfarm-2026-11", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["options"] and d["excluded"] and d["currency"] == "EUR"
    o = d["options"][0]
    assert o["price_per_hour"]["currency"] == "EUR" and o["time_s"]["typical"] > 0
    table = cli("recommend", "llama-2-7b", "--task", "lora", "--steps", "2000",
                "--prices", "vramfarm-2026-11")
    assert table.code == 0 and "rtx-4090" in table.out and "Why" in table.out


def test_recommend_rejects_two_amounts(cli):
    r = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--images", "10")
    assert r.code == 2


def test_checklist_from_flags_and_refuses_missing_answers_in_scripts(cli):
    r = cli("checklist", "--workload", "fine-tuning", "--model", "7B", "--budget-per-hour",
            "1USD", "--hours-per-month", "50", "--horizon-months", "12",
            "--prices", "article-000", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["decision"] == "rent" and d["gpu"]
    missing = cli("checklist", "--workload", "inference", "--json")
    assert missing.code == 2 and "--model" in missing.err


def test_validate_memory_prints_errors_by_category(cli):
    r = cli("validate", "memory", "--json")
    assert r.code == 0
    d = r.json()
    assert len(d["rows"]) >= 60
    cats = {s["category"] for s in d["summary"]}
    assert {"weights", "inference", "training"} <= cats
    weights = next(s for s in d["summary"] if s["category"] == "weights"
                   and s["split"] == "holdout")
    assert weights["median_abs_error"] < 0.05


def test_validate_speed_covers_at_least_80_rows(cli):
    d = cli("validate", "speed", "--no-cross-validation", "--json").json()
    assert len(d["rows"]) >= 80
    assert {s["category"] for s in d["summary"]} >= {"decode", "prefill", "training"}


def test_memory_answers_the_serving_capacity_questions(cli):
    d = cli("memory", "llama-3.1-8b", "--engine", "vllm", "--context", "8k", "--gpu",
            "h100-sxm", "--json").json()
    cap = d["capacity"]
    assert cap["max_concurrent_sequences"] > 20  # 128 KiB/token x 8k = 1 GiB per sequence
    assert cap["max_context_tokens"] == 131072  # the model's own limit binds first
